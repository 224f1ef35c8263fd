//! `uring_server` where io_uring is refused (as a seccomp filter, a
//! container's default profile or `kernel.io_uring_disabled` refuse it):
//! it says so on standard error and exits with status 2, without printing
//! an address. The refusal is a seccomp filter that fails `io_uring_setup`
//! with `EPERM`, installed by Python (ctypes, `prctl`) before it execs the
//! server.
#![cfg(target_os = "linux")]

use h1proto_test_support::process as server_process;

use std::process::Command;
use std::time::{Duration, Instant};

/// Installs a seccomp filter refusing `io_uring_setup` (syscall 425 on
/// every architecture with the generic syscall table, x86-64 included)
/// with `EPERM`, then execs `argv[1:]`.
const WITHOUT_IO_URING: &str = r#"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
def insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([
    insn(0x20, 0, 0, 0),                 # ld [nr]
    insn(0x15, 0, 1, 425),               # jeq io_uring_setup
    insn(0x06, 0, 0, 0x00050000 | 1),    # ret ERRNO(EPERM)
    insn(0x06, 0, 0, 0x7fff0000),        # ret ALLOW
])
buf = ctypes.create_string_buffer(prog)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Fprog(len(prog) // 8, ctypes.addressof(buf))
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
    sys.exit("prctl(NO_NEW_PRIVS): errno %d" % ctypes.get_errno())
if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit("prctl(SECCOMP): errno %d" % ctypes.get_errno())
os.execv(sys.argv[1], sys.argv[1:])
"#;

#[test]
fn without_io_uring_it_says_so_and_exits_non_zero() {
    let server = server_process::binary("uring_server");
    let started = Instant::now();
    let out = Command::new("python3")
        .args(["-c", WITHOUT_IO_URING])
        .arg(&server)
        .args(["--addr", "127.0.0.1:0"])
        .output()
        .expect("python3 is required (.ci/run installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stderr.contains("io_uring is not available here"),
        "stderr: {stderr}"
    );
    assert!(!stdout.contains("Listening"), "it listened: {stdout}");
    assert!(started.elapsed() < Duration::from_secs(20));
}
