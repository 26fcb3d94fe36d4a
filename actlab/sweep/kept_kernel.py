"""Every run in a fresh kernel, forked from a warm template that no run ever executes in.

Why fresh: a kernel kept from one run to the next carries whatever a run changed (a monkeypatched function, the
default dtype, an environment variable, `sys.modules`), and no reset can list everything a notebook may change.
Why a template: a new kernel spends seconds importing torch and friends and warming the compiler; a template pays
that once (`WARM_IMPORTS`, `_warm_the_compiler`, `PREBUILD`), never runs a notebook, and forks each run's kernel
copy-on-write while no thread runs (checked). docs/sweeps.md ("A fresh kernel per run") has the whole design.

How jupyter_client drives it, through public interfaces only: the run's kernel spec (`spec_folder`) launches a
stdlib-only stand-in (`PROXY`) that hands the template's Unix socket its stdio, working directory, environment and
kernel arguments; the template forks and the child becomes the kernel. The stand-in stays as the process
jupyter_client manages (it passes on signals and exits with the kernel; the kernel dies with it), so stopping,
interrupting and killing work as for any kernel, and the worker's lifeline (`actlab.sweep.lifeline`) reaches them.
Only the local executor on Linux (`FORKS`) uses a template; one that cannot start leaves its worker's runs to plain
kernels, said in each run's status. This file is also the template's program (`python kept_kernel.py ADDRESS`): at
import it needs only the stdlib.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Imported once by the template: what every run's kernel would otherwise import itself. Third-party libraries only:
# actlab's own modules cost ~0.1 s together, and importing a study's module may register names a run could see.
WARM_IMPORTS = ("ipykernel.kernelapp", "numpy", "scipy", "sympy", "pandas", "torch", "matplotlib")
PREBUILD = "actlab.train.prebuild"  # its `build()`: the kernels and data every run of the default studies builds
PREBUILD_SWITCH = "ACTLAB_PREBUILD_KERNELS"  # "0": the template builds none (the test suite's templates)
PER_RUN = ("ACTLAB_RUN_DIR",)  # environment variables that differ between runs of one template (read at run time)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # ipykernel's default MPLBACKEND, set before matplotlib
READY = "ready"  # the template's first line on stdout once it has imported `WARM_IMPORTS`
# Forking a process that has imported torch is safe on Linux (no thread runs at the fork); macOS's system
# frameworks are not fork-safe, so there each run starts a plain kernel (`actlab.notebooks.execute`).
FORKS = sys.platform.startswith("linux")
START_TIMEOUT = 300.0  # seconds for the template's imports and warm-up: generous, a loaded machine is slow

# The kernel's stand-in, run as `python -I -S -c PROXY ADDRESS KERNEL_ARGS...` (stdlib only: no site, no actlab).
PROXY = """\
import json, os, select, signal, socket, sys
address, argv = sys.argv[1], sys.argv[2:]
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    conn.connect(address)
except OSError as error:
    sys.exit(f"actlab: no kernel template at {address}: {error}")
socket.send_fds(conn, [b"k"], [0, 1, 2])
request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
conn.sendall(json.dumps(request).encode() + b"\\n")
reply = b""
while not reply.endswith(b"\\n"):
    chunk = conn.recv(64)
    if not chunk:
        sys.exit(1)  # the kernel never started; it said why on stderr
    reply += chunk
kernel = int(reply)
def forward(signum, frame):
    try:
        os.kill(kernel, signum)
    except ProcessLookupError:
        pass
for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(signum, forward)
parent = os.getppid()
while os.getppid() == parent:
    if select.select([conn], [], [], 1.0)[0] and not conn.recv(64):
        break
"""


# ---- the worker's side ----------------------------------------------------------------------------------------


@dataclass
class _Template:
    key: tuple[tuple[str, str], ...]  # the environment it was started with, `PER_RUN` left out
    process: subprocess.Popen[bytes]
    folder: str  # 0700: the template's socket and the kernel spec that points at it
    forks: int = 0


_template: _Template | None = None
_failed: dict[tuple[tuple[str, str], ...], str] = {}  # environments whose template could not start, and why
_stops_at_exit = False


def execute(
    template: str | os.PathLike[str],
    output: Path,
    parameters: dict[str, Any],
    folder: Path,
    timeout: float | None = None,
    facts: dict[str, Any] | None = None,
) -> None:
    """Execute `template` into `output` like `actlab.notebooks.execute`, in a fresh kernel forked from this worker's
    kernel template for `os.environ` (started if there is none). `facts` (the run's status record) gets
    `kernel_template_pid` and `kernel_template_forks` (kernels it had forked before) before the notebook runs.

    Raises what papermill raises. The template outlives a failed run; a dead one is replaced by the next run. A
    template that cannot start (why: `kernel.log`) leaves this and every later run of the environment to a plain
    kernel, said in `facts` (`kernel_template_error`).
    """
    from actlab import notebooks

    env = dict(os.environ)
    kernel_template = _usable_template(env) if FORKS else None
    if facts is not None and kernel_template is not None:
        facts.update(kernel_template_pid=kernel_template.process.pid, kernel_template_forks=kernel_template.forks)
    elif facts is not None and _key(env) in _failed:
        facts["kernel_template_error"] = _failed[_key(env)]
    if kernel_template is not None:
        kernel_template.forks += 1
    specs = spec_folder(kernel_template.folder) if kernel_template is not None else None
    notebooks.execute(template, output, parameters, folder, timeout, stop_kernel_at_once=True, kernel_specs=specs)


def spec_folder(folder: str) -> str:
    """The kernel spec folder inside a template's `folder` (its `actlab` spec launches `PROXY`)."""
    return os.path.join(folder, "kernels")


def _key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, value) for name, value in env.items() if name not in PER_RUN))


def _usable_template(env: dict[str, str]) -> _Template | None:
    """This worker's template for `env`, or None once one could not start for `env` (said on stderr, once)."""
    from actlab.errors import ActlabError

    if _key(env) in _failed:
        return None
    try:
        return _template_for(env)
    except ActlabError as error:
        _failed[_key(env)] = str(error)
        os.write(2, f"actlab: {error}; this worker's runs start plain kernels\n".encode())  # the run's kernel.log
        return None


def _template_for(env: dict[str, str]) -> _Template:
    """This worker's template for `env`, started now if there is none, it has died, or it has another environment."""
    global _template
    if _template is not None and (_template.key != _key(env) or _template.process.poll() is not None):
        discard()
    if _template is None:
        _stop_at_exit()
        _template = start_template(env)
    return _template


def start_template(env: dict[str, str]) -> _Template:
    """Start a template with environment `env` (less `PER_RUN`) and wait until it has imported `WARM_IMPORTS`.

    Its environment is the one jupyter_client gives a kernel this process launches (`JPY_PARENT_PID` added), so
    every module it imports reads what the run's kernel would read (`PER_RUN` aside). Its stderr is this process's
    (a run's `kernel.log` while the sweep worker executes one).
    """
    from actlab import notebooks
    from actlab.errors import ActlabError

    interpreter, spec = _installed_kernel()
    folder = notebooks.make_sockets_folder()  # removed by `discard`
    address = os.path.join(folder, "template")  # short: a socket path has ~107 bytes
    kernel = Path(spec_folder(folder), notebooks.KERNEL_NAME)
    kernel.mkdir(parents=True)
    spec["argv"] = [sys.executable, "-I", "-S", "-c", PROXY, address, *spec["argv"]]
    (kernel / "kernel.json").write_text(json.dumps(spec, indent=1))
    template_env = {name: value for name, value in env.items() if name not in PER_RUN}
    template_env["JPY_PARENT_PID"] = str(os.getpid())
    process = subprocess.Popen(
        [*interpreter, __file__, address],
        stdin=subprocess.PIPE,  # its lifeline: the template exits at EOF (this process gone)
        stdout=subprocess.PIPE,
        env=template_env,
        cwd=folder,
        start_new_session=True,  # like jupyter_client's kernels: a terminal's Ctrl-C is the sweep's to handle
    )
    made = _Template(key=_key(env), process=process, folder=folder)
    ready = _read_line(process, START_TIMEOUT)
    if ready != READY:
        _stop(made)
        raise ActlabError(f"the kernel template did not start ({ready or 'it exited'}; its error is above)")
    return made


def _installed_kernel() -> tuple[list[str], dict[str, Any]]:
    """The installed `actlab` kernel spec, split: its interpreter with its options (`python -Xfrozen_modules=off`),
    which the template runs as, and the spec with the kernel's own arguments as `argv` (`-f {connection_file}`).
    Everything else in the spec (its metadata: the debugger, transport encryption) is the forked kernel's too."""
    from jupyter_client.kernelspec import KernelSpecManager

    from actlab import notebooks
    from actlab.errors import ActlabError

    spec = KernelSpecManager().get_kernel_spec(notebooks.ensure_kernel()).to_dict()
    argv = spec["argv"]
    if "-m" not in argv or argv.index("-m") + 1 >= len(argv) or argv[argv.index("-m") + 1] != "ipykernel_launcher":
        raise ActlabError(f"the {notebooks.KERNEL_NAME!r} kernel spec does not run ipykernel_launcher: {argv}")
    launcher = argv.index("-m")
    spec["argv"] = argv[launcher + 2 :]
    return argv[:launcher], spec


def _read_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The process's next stdout line ('' if it ended or said nothing within `timeout` seconds)."""
    import select

    assert process.stdout is not None
    if not select.select([process.stdout], [], [], timeout)[0]:
        return ""
    return process.stdout.readline().decode(errors="replace").strip()


def discard() -> None:
    """Stop this worker's template and remove its folder (its kernels have ended with their runs)."""
    global _template
    if _template is not None:
        made, _template = _template, None
        _stop(made)


def _stop(made: _Template) -> None:
    with contextlib.suppress(OSError, ValueError):
        if made.process.stdin is not None:
            made.process.stdin.close()  # the template's EOF: it exits
    try:
        made.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        made.process.kill()
        made.process.wait()
    if made.process.stdout is not None:
        made.process.stdout.close()
    shutil.rmtree(made.folder, ignore_errors=True)


def _stop_at_exit() -> None:
    """Stop the template when this worker process exits (pool workers end through multiprocessing, which skips
    atexit; the template would also end by itself at its stdin's EOF)."""
    global _stops_at_exit
    if not _stops_at_exit:
        import multiprocessing.util

        multiprocessing.util.Finalize(None, discard, exitpriority=10)
        _stops_at_exit = True


# ---- the template's side ----------------------------------------------------------------------------------------


def serve(address: str) -> None:
    """The template: import `WARM_IMPORTS`, say `READY`, then fork a kernel for each connection to `address`.

    It reads nothing a connection sends: the child does, after the fork. It exits at EOF on stdin.
    """
    import gc
    import importlib
    import selectors
    import threading

    started_env = dict(os.environ)
    status = os.fdopen(os.dup(1), "w")  # to the worker; whatever an import prints goes to stderr instead
    os.dup2(2, 1)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(8)
    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)  # what ipykernel sets before a notebook can import matplotlib
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # no pool of compile workers: no threads to fork
    for name in WARM_IMPORTS:
        importlib.import_module(name)
    import torch

    if not torch.backends.cuda.is_built():  # a CUDA build's compile path may start CUDA, which a fork cannot copy
        _warm_the_compiler()
        if os.environ.get(PREBUILD_SWITCH, "1") != "0":
            _prebuild_kernels()
    os.environ.clear()
    os.environ.update(started_env)
    if threading.active_count() != 1:  # native threads (OpenBLAS's pool) handle fork themselves (pthread_atfork)
        names = ", ".join(thread.name for thread in threading.enumerate())
        sys.exit(f"actlab: the kernel template's imports started threads ({names}); forking it would be unsafe")
    if torch.cuda.is_initialized():
        sys.exit("actlab: the kernel template's imports started CUDA; its forked kernels could not use the GPU")
    gc.freeze()  # the imports' objects: never collected again, so no kernel walks (or copies) them
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # kernels are reaped by the system; the stand-in watches them
    status.write(READY + "\n")
    status.flush()
    selector = selectors.DefaultSelector()
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
    selector.register(listener, selectors.EVENT_READ)
    while True:
        for event, _ in selector.select():
            if event.fileobj is listener:
                conn, _ = listener.accept()
                if os.fork() == 0:
                    selector.close()
                    listener.close()
                    status.close()
                    _become_kernel(conn, started_env)
                conn.close()
            elif not os.read(sys.stdin.fileno(), 1024):
                return  # the worker is gone


def _warm_the_compiler() -> None:
    """Pay once, here, what every process pays on its first `torch.compile` call: importing dynamo and inductor,
    and inductor's probes of the C++ compiler and the CPU's vector instructions. On a four-element function: no
    thread is left behind (tqdm's monitor is off meanwhile; inductor compiles in this process,
    `TORCHINDUCTOR_COMPILE_THREADS`) and no tensor op is large enough to start a thread pool."""
    import torch

    with _no_progress_monitor():
        torch.compile(_affine)(torch.ones(4))


@contextlib.contextmanager
def _no_progress_monitor() -> Iterator[None]:
    """tqdm's monitor thread off in the block, while inductor shows its progress bars: a template forks no thread."""
    import tqdm

    interval = tqdm.tqdm.monitor_interval
    tqdm.tqdm.monitor_interval = 0
    try:
        yield
    finally:
        tqdm.tqdm.monitor_interval = interval


def _prebuild_kernels() -> None:
    """`PREBUILD`'s kernels and data, built once here for every kernel this template forks. A failure is said on
    stderr (the worker's kernel log) and costs nothing else: each run then builds what it needs, as before."""
    import importlib

    try:
        with _no_progress_monitor():
            importlib.import_module(PREBUILD).build()
    except Exception as error:  # noqa: BLE001 - any failure only means the runs compile their own kernels
        print(f"actlab: the kernel template prebuilt nothing ({type(error).__name__}: {error})", file=sys.stderr)


def _affine(x: Any) -> Any:
    return x * 2.0 + 1.0


def _become_kernel(conn: socket.socket, template_env: dict[str, str]) -> None:
    """In a fresh fork: take the stand-in's stdio, working directory and environment, then run ipykernel."""
    import importlib.util
    import threading

    try:
        os.setsid()  # its own process group, as jupyter_client starts kernels: killing the group ends what it started
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        request = json.loads(conn.makefile("rb").readline())  # the stand-in sends one line, then waits
        env = request["env"]
        if _key(env) != _key(template_env):
            changed = sorted(set(_key(env)) ^ set(_key(template_env)))
            sys.exit(f"actlab: a kernel asked for another environment than its template's: {changed[:5]}")
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        launcher = importlib.util.find_spec("ipykernel_launcher")  # what a launched kernel's sys.argv[0] names
        sys.argv = [launcher.origin if launcher and launcher.origin else sys.argv[0], *request["argv"]]
        conn.sendall(f"{os.getpid()}\n".encode())
        threading.Thread(target=_die_with, args=(conn,), name="actlab-stand-in", daemon=True).start()
        from ipykernel.kernelapp import IPKernelApp

        IPKernelApp.launch_instance(argv=request["argv"])
    except SystemExit as end:
        if end.code not in (None, 0):
            print(end.code, file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _die_with(conn: socket.socket) -> None:
    """End this kernel (its process group) when its stand-in is gone: killed, or its worker ended."""
    while True:
        try:
            if conn.recv(64):
                continue
        except OSError:
            pass
        os.killpg(0, signal.SIGKILL)


if __name__ == "__main__":
    del sys.path[0]  # this file's folder: the template imports as a kernel would, not from actlab/sweep
    serve(sys.argv[1])
    os._exit(0)  # nothing to flush or save; tearing torch down would only delay the worker
