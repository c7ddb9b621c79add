//! The kinds of keys and values: how each is written as bytes (keys so
//! that the bytes sort as the keys do).

use anyhow::{Context, Result, ensure};

use super::{KeyKind, ValueKind};

/// A string (key or value), as UTF-8.
pub struct Text;
/// A string and a sequence number: one user's numbered records.
pub struct TextSeq;
/// A string and a small part number: one user's segments.
pub struct TextPart;
/// A time (i64) and a string: a queue ordered by when.
pub struct TimeText;
/// Bytes (values only).
pub struct Bytes;
/// A counter (values only).
pub struct Count;
/// Nothing: the key is the record (values only).
pub struct Unit;

/// Ends the string part of a composite key: ids never contain NUL.
pub(super) const SEPARATOR: u8 = 0;

impl KeyKind for Text {
    type Arg<'a> = &'a str;
    type Owned = String;
    fn encode(arg: &str, out: &mut Vec<u8>) {
        out.extend_from_slice(arg.as_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<String> {
        Ok(std::str::from_utf8(bytes).context("a text key")?.to_owned())
    }
}

impl KeyKind for TextSeq {
    type Arg<'a> = (&'a str, u64);
    type Owned = (String, u64);
    fn encode((text, seq): (&str, u64), out: &mut Vec<u8>) {
        out.extend_from_slice(text.as_bytes());
        out.push(SEPARATOR);
        out.extend_from_slice(&seq.to_be_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<(String, u64)> {
        let (text, number) = split_number::<8>(bytes)?;
        Ok((text, u64::from_be_bytes(number)))
    }
}

impl KeyKind for TextPart {
    type Arg<'a> = (&'a str, u32);
    type Owned = (String, u32);
    fn encode((text, part): (&str, u32), out: &mut Vec<u8>) {
        out.extend_from_slice(text.as_bytes());
        out.push(SEPARATOR);
        out.extend_from_slice(&part.to_be_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<(String, u32)> {
        let (text, number) = split_number::<4>(bytes)?;
        Ok((text, u32::from_be_bytes(number)))
    }
}

impl KeyKind for TimeText {
    type Arg<'a> = (i64, &'a str);
    type Owned = (i64, String);
    fn encode((time, text): (i64, &str), out: &mut Vec<u8>) {
        // Flipping the sign bit makes the bytes of negative times sort first.
        out.extend_from_slice(&((time as u64) ^ (1 << 63)).to_be_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<(i64, String)> {
        ensure!(bytes.len() >= 8, "a time key is too short");
        let (time, text) = bytes.split_at(8);
        let time = (u64::from_be_bytes(time.try_into().expect("8 bytes")) ^ (1 << 63)) as i64;
        Ok((time, <Text as KeyKind>::decode(text)?))
    }
}

/// `text \0 number` → (text, number).
fn split_number<const N: usize>(bytes: &[u8]) -> Result<(String, [u8; N])> {
    ensure!(bytes.len() > N, "a composite key is too short");
    let (text, number) = bytes.split_at(bytes.len() - N - 1);
    ensure!(
        number[0] == SEPARATOR,
        "a composite key lacks its separator"
    );
    let text = <Text as KeyKind>::decode(text)?;
    Ok((text, number[1..].try_into().expect("N bytes")))
}

impl ValueKind for Text {
    type Arg<'a> = &'a str;
    type Owned = String;
    fn encode(arg: &str) -> Vec<u8> {
        arg.as_bytes().to_vec()
    }
    fn decode(bytes: &[u8]) -> Result<String> {
        <Text as KeyKind>::decode(bytes)
    }
}

impl ValueKind for Bytes {
    type Arg<'a> = &'a [u8];
    type Owned = Vec<u8>;
    fn encode(arg: &[u8]) -> Vec<u8> {
        arg.to_vec()
    }
    fn decode(bytes: &[u8]) -> Result<Vec<u8>> {
        Ok(bytes.to_vec())
    }
}

impl ValueKind for Count {
    type Arg<'a> = u64;
    type Owned = u64;
    fn encode(arg: u64) -> Vec<u8> {
        arg.to_le_bytes().to_vec()
    }
    fn decode(bytes: &[u8]) -> Result<u64> {
        Ok(u64::from_le_bytes(
            bytes.try_into().context("a counter is 8 bytes")?,
        ))
    }
}

impl ValueKind for Unit {
    type Arg<'a> = ();
    type Owned = ();
    fn encode((): ()) -> Vec<u8> {
        Vec::new()
    }
    fn decode(_: &[u8]) -> Result<()> {
        Ok(())
    }
}
