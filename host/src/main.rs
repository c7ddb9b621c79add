fn main() {
    println!("quarry {}", env!("CARGO_PKG_VERSION"));
}
