//! A PostgreSQL and a Redis of one test's own, which it may stop and start
//! again (never the machine's shared ones): from Debian's packages, in a
//! temporary folder, on a free port, stopped when dropped; over plain TCP,
//! or over TLS only ([`EngineTls`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A CA of the test's own and a certificate it signed for `localhost` and
/// 127.0.0.1, as files the engines and the server read.
pub struct EngineTls {
    dir: tempfile::TempDir,
}

impl EngineTls {
    pub fn new() -> EngineTls {
        let made = fake_saas::tls::certificate_for("Quarry engines test CA", &["localhost"])
            .expect("a certificate");
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("ca.pem"), &made.ca_pem).unwrap();
        std::fs::write(dir.path().join("server.pem"), &made.chain_pem).unwrap();
        std::fs::write(dir.path().join("server.key"), &made.key_pem).unwrap();
        EngineTls { dir }
    }

    /// The CA's certificate (PEM), which clients check the engines by.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn cert(&self) -> PathBuf {
        self.dir.path().join("server.pem")
    }

    fn key(&self) -> PathBuf {
        self.dir.path().join("server.key")
    }
}

impl Default for EngineTls {
    fn default() -> Self {
        EngineTls::new()
    }
}

/// A private Redis that keeps what it counts across its restarts
/// (`appendonly yes`, as production should).
pub struct OwnRedis {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
    /// TLS only, with these files: no plain port at all.
    tls: Option<(PathBuf, PathBuf, PathBuf)>,
}

impl OwnRedis {
    pub fn start() -> OwnRedis {
        OwnRedis::started(None)
    }

    /// One that speaks TLS only.
    pub fn start_tls(tls: &EngineTls) -> OwnRedis {
        OwnRedis::started(Some((tls.cert(), tls.key(), tls.ca())))
    }

    fn started(tls: Option<(PathBuf, PathBuf, PathBuf)>) -> OwnRedis {
        let mut redis = OwnRedis {
            port: free_port(),
            dir: tempfile::tempdir().expect("temp dir"),
            child: None,
            tls,
        };
        redis.resume();
        redis
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Stops it gracefully (it writes its append-only file).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
        }
    }

    /// Starts it again, on the same port and folder.
    pub fn resume(&mut self) {
        let mut command = Command::new("redis-server");
        match &self.tls {
            None => command.args(["--port", &self.port.to_string()]),
            Some((cert, key, ca)) => command
                .args(["--port", "0", "--tls-port", &self.port.to_string()])
                .arg("--tls-cert-file")
                .arg(cert)
                .arg("--tls-key-file")
                .arg(key)
                .arg("--tls-ca-cert-file")
                .arg(ca)
                .args(["--tls-auth-clients", "no"]),
        };
        let child = command
            .args(["--bind", "127.0.0.1"])
            .args(["--appendonly", "yes", "--save", ""])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (tools/engines installs it)");
        self.child = Some(child);
        wait_for(self.port, "Redis");
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A private PostgreSQL cluster (`initdb` in a temporary folder).
pub struct OwnPostgres {
    pub port: u16,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl OwnPostgres {
    pub fn start() -> OwnPostgres {
        OwnPostgres::started(None)
    }

    /// One that accepts TCP connections over TLS only (`hostssl` in its
    /// pg_hba.conf, `hostnossl` rejected), with this certificate.
    pub fn start_tls(tls: &EngineTls) -> OwnPostgres {
        OwnPostgres::started(Some(tls))
    }

    fn started(tls: Option<&EngineTls>) -> OwnPostgres {
        let bin = postgres_bin();
        let dir = tempfile::tempdir().expect("temp dir");
        if is_root() {
            // initdb and the server refuse root: the folder is postgres's.
            run(Command::new("chown")
                .arg("-R")
                .arg("postgres")
                .arg(dir.path()));
        }
        let data = dir.path().join("data");
        run(as_owner(&bin.join("initdb")).arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "--auth=trust",
        ]));
        if let Some(tls) = tls {
            require_tls(&data, tls);
        }
        let postgres = OwnPostgres {
            port: free_port(),
            dir,
            bin,
        };
        postgres.resume();
        postgres
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A fast shutdown: sessions are cut, committed work is on disk.
    pub fn stop(&self) {
        run(as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "-w", "stop"]));
    }

    pub fn resume(&self) {
        let options = format!(
            // 127.0.0.2 too: a name its certificate does not have.
            "-p {} -k {} -c listen_addresses=127.0.0.1,127.0.0.2 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        run(as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .args(["-o", &options, "-w", "start"]));
        wait_for(self.port, "PostgreSQL");
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// Puts the certificate in the cluster and lets TCP clients in over TLS
/// only.
fn require_tls(data: &Path, tls: &EngineTls) {
    std::fs::copy(tls.cert(), data.join("server.pem")).unwrap();
    std::fs::copy(tls.key(), data.join("server.key")).unwrap();
    let mut conf = std::fs::read_to_string(data.join("postgresql.conf")).unwrap();
    conf.push_str("\nssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\n");
    std::fs::write(data.join("postgresql.conf"), conf).unwrap();
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all trust\n\
         hostssl all all 127.0.0.0/8 trust\n\
         hostnossl all all 0.0.0.0/0 reject\n",
    )
    .unwrap();
    // The key must be its owner's alone, and the owner the server's.
    run(Command::new("chmod")
        .arg("600")
        .arg(data.join("server.key")));
    if is_root() {
        run(Command::new("chown")
            .arg("postgres")
            .arg(data.join("server.pem"))
            .arg(data.join("server.key")));
    }
}

fn postgres_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's binaries in /usr/lib/postgresql (tools/engines installs them)")
        .filter_map(|e| Some(e.ok()?.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    found.sort();
    found
        .pop()
        .expect("an initdb under /usr/lib/postgresql/*/bin")
}

fn is_root() -> bool {
    std::env::var("USER").is_ok_and(|u| u == "root")
        || Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0"))
}

fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn run(command: &mut Command) {
    let out = command.output().expect("the engine's tool runs");
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until something accepts connections on `port` (a guard, not a
/// measurement).
fn wait_for(port: u16, what: &str) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what} did not start on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
