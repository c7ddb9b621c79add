//! A PostgreSQL and a Redis of one test's own, which it may stop and start
//! again (never the machine's shared ones): from Debian's packages, in a
//! temporary folder, on a free port, stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A private Redis that keeps what it counts across its restarts
/// (`appendonly yes`, as production should).
pub struct OwnRedis {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl OwnRedis {
    pub fn start() -> OwnRedis {
        let mut redis = OwnRedis {
            port: free_port(),
            dir: tempfile::tempdir().expect("temp dir"),
            child: None,
        };
        redis.resume();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
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
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
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
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
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
