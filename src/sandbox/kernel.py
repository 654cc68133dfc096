"""lllm's Python kernel: one persistent namespace that the host drives over two pipes.

The host writes newline-delimited JSON to fd 3 and reads ours from fd 4. Printed output never travels on those
pipes: fds 1 and 2 point at a capture pipe of our own, so nothing user code (or a process it starts) writes can
corrupt the protocol. The host starts us with `-I -S -B -u -X utf8`; modules that only some cells need are imported
lazily, because every kernel pays for its start.

Messages, host -> kernel:  init {prelude, limits, maxOutputChars, truncationIndicator, maxMessageBytes, cwd,
                           seccomp} (once, first)
                           run {id, code, timeout} · reset {id} · reply {id, ok, value | error {type, message}}
          kernel -> host:  ready {pid} | ready {error} · result {id, output, error {type, message} | null, timedOut}
                           call {id, name, args}
"""

import os
import sys

# Only the protocol pipes may exist in the sandbox: close whatever else the launcher left open (bwrap's argument
# and filter files; any descriptor the host failed to mask) before anything else runs.
def _close_extra_fds():
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        os.closerange(5, 65536)
        return
    for name in names:
        if int(name) > 4:
            try:
                os.close(int(name))
            except OSError:
                pass  # the listing's own descriptor, closed already


_close_extra_fds()
del _close_extra_fds

# Move the protocol pipes off fds 3 and 4 at once: dup() makes close-on-exec copies, so a program started with
# subprocess never inherits them. (A forked copy of this process does; see _leave_if_forked.)
_RFD = os.dup(3)
_WFD = os.dup(4)
os.close(3)
os.close(4)

import _signal as signal  # the C module: `signal` itself imports enum, a millisecond of every start
import builtins
import threading
import types

_PID = os.getpid()
_MAIN_THREAD = threading.get_ident()
_KERNEL_FILE = __file__
_PRELUDE_FILE = "<lllm-prelude>"


# ---------------------------------------------------------------------------------------------------------------
# Writing to the host. Any thread may send; a lock keeps lines whole. The timeout alarm never raises while the main
# thread is inside _send (see _Alarm), so a message is never cut in half.

_write_lock = threading.Lock()


def _make_codec():
    """JSON from the C half of the json package: importing `json` itself pulls in re and enum, a third of a start."""
    try:
        import _json
    except ImportError:  # another Python implementation: the plain module will do
        import json

        return lambda message: json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")), json.loads

    class Settings:
        strict = True
        object_hook = object_pairs_hook = None
        parse_float, parse_int = float, int
        parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__
        memo = {}

    def unserialisable(value):
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    # No cycle check (markers=None): the encoder is shared by threads, and a cycle still ends in RecursionError.
    encoder = _json.make_encoder(None, unserialisable, _json.encode_basestring, None, ":", ",", False, False, False)
    scanner = _json.make_scanner(Settings())

    def dumps(message):
        return "".join(encoder(message, 0))

    def loads(line):
        try:
            return scanner(line.decode("utf-8") if isinstance(line, bytes) else line, 0)[0]
        except StopIteration:
            raise ValueError("not JSON") from None

    return dumps, loads


_dumps, _loads = _make_codec()


def _encode(message):
    return _dumps(message).encode("utf-8", "surrogatepass") + b"\n"


def _send(data):
    main = threading.get_ident() == _MAIN_THREAD
    if main:
        _alarm.defer += 1
    try:
        with _write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(_WFD, view):]
    except BrokenPipeError:
        os._exit(0)  # the host is gone: nobody is left to serve
    finally:
        if main:
            _alarm.defer -= 1
    if main:
        _alarm.raise_if_due()


# ---------------------------------------------------------------------------------------------------------------
# The time limit of a cell: SIGALRM raises TimeoutError in the main thread, so the namespace survives. The class is
# a BaseException, so `except Exception:` in the cell does not swallow it; if the cell swallows it anyway, the alarm
# fires again every second until the host's backstop kills the process.


class CellTimeout(BaseException):
    pass


CellTimeout.__name__ = CellTimeout.__qualname__ = "TimeoutError"
CellTimeout.__module__ = "builtins"  # printed as `TimeoutError: ...`, like the seed's interpreter


class _Alarm:
    def __init__(self):
        self.running = False
        self.defer = 0
        self.due = False
        self.fired = False
        self.seconds = 0

    def start(self, seconds):
        self.seconds, self.due, self.fired = seconds, False, False
        self.running = True
        if seconds > 0:
            signal.setitimer(signal.ITIMER_REAL, seconds)

    def stop(self):
        self.running = False  # first: an alarm that lands now is ignored
        signal.setitimer(signal.ITIMER_REAL, 0)

    def on_signal(self, signum, frame):
        if not self.running:
            return
        if self.defer:
            self.due = True
            return
        self._raise()

    def raise_if_due(self):
        if self.due and self.running and not self.defer:
            self._raise()

    def _raise(self):
        self.due = False
        self.fired = True
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        raise CellTimeout(f"cell exceeded the time limit of {self.seconds:g} s")


_alarm = _Alarm()


# ---------------------------------------------------------------------------------------------------------------
# Output capture. fds 1 and 2 are the write end of a pipe that a pump thread reads, so print(), sys.stderr, and the
# output of subprocesses all land in one ordered stream. At the end of a cell the kernel writes a marker through its
# own copy of the write end and waits for the pump to reach it: everything written before it belongs to the cell.

_HOST_STDERR = os.dup(2)  # the host's stderr pipe, for output written between cells
_out_read, _out_write = os.pipe()
os.dup2(_out_write, 1)
os.dup2(_out_write, 2)
_MARKER = b"\0lllm-end-of-cell-" + os.urandom(8).hex().encode() + b"\0"


class _Capture:
    def __init__(self):
        self.active = False
        self.chunks = []
        self.size = 0
        self.limit_bytes = 0  # 0: keep everything
        self.overflow = False
        self.reached = threading.Event()

    def begin(self, max_chars):
        self.chunks, self.size, self.overflow = [], 0, False
        self.received = 0  # every byte the pump delivered, kept or not: tells end() that output still flows
        # UTF-8 takes at most 4 bytes a character: keep enough bytes for max_chars characters and drop the rest.
        # Without a limit, keep no more than one message to the host can carry: the rest could never be sent.
        self.limit_bytes = max_chars * 4 + 4 if max_chars > 0 else (_config.get("maxMessageBytes") or 0)
        self.active = True

    def deliver(self, data):
        if not data:
            return
        self.received += len(data)
        if not self.active:
            try:
                os.write(_HOST_STDERR, data)
            except OSError:
                pass
            return
        if self.limit_bytes and self.size + len(data) > self.limit_bytes:
            data = data[: max(0, self.limit_bytes - self.size)]
            self.overflow = True
        self.chunks.append(data)
        self.size += len(data)

    def end(self):
        self.reached.clear()
        try:
            os.write(_out_write, _MARKER)
            # Wait for the pump to reach the marker. A cell that printed tens of megabytes takes a while on a busy
            # host: keep waiting while output still arrives, or the rest would be cut off (and go to stderr).
            seen = -1
            while not self.reached.wait(5.0) and self.received != seen:
                seen = self.received
        except OSError:
            pass
        self.active = False
        return b"".join(self.chunks).decode("utf-8", "replace"), self.overflow


_capture = _Capture()


def _pump():
    tail = b""
    while True:
        chunk = os.read(_out_read, 65536)
        if not chunk:
            return
        try:
            tail = _split(tail + chunk)
        except MemoryError:  # the cell filled the memory limit: lose this chunk rather than the thread
            tail = b""
            _capture.overflow = True


def _split(data):
    """Deliver `data` up to each marker; return what must wait for the next read."""
    while True:
        at = data.find(_MARKER)
        if at < 0:
            break
        _capture.deliver(data[:at])
        data = data[at + len(_MARKER):]
        _capture.reached.set()
    # Hold back a possible start of the marker (it begins with a NUL) until the next read.
    cut = data.rfind(b"\0", max(0, len(data) - len(_MARKER) + 1))
    if cut < 0:
        _capture.deliver(data)
        return b""
    _capture.deliver(data[:cut])
    return data[cut:]


# ---------------------------------------------------------------------------------------------------------------
# The bridge: Python calls host functions by name. A reader thread receives every message from the host, wakes the
# caller waiting for a reply, and queues runs for the main thread. Callers may be any thread of the program.

_pending = {}
_call_ids = iter(range(1, 1 << 62))
_inbox = []
_inbox_ready = threading.Semaphore(0)
_error_classes = {}


class _Slot:
    __slots__ = ("event", "reply")

    def __init__(self):
        self.event = threading.Event()
        self.reply = None


def error_class(name):
    """The exception class the bridge raises for a host error of type `name`.

    A builtin exception of that name (ValueError, KeyError, ...), else a RuntimeError subclass made once, so that
    `except ToolBudgetExceeded:` works before the first such error was raised.
    """
    if not isinstance(name, str) or not name.isidentifier():
        name = "BridgeError"
    cls = _error_classes.get(name)
    if cls is None:
        builtin = getattr(builtins, name, None)
        if isinstance(builtin, type) and issubclass(builtin, Exception):
            cls = builtin
        else:
            cls = type(name, (RuntimeError,), {"__module__": "builtins"})  # printed as `ToolError: ...`
        _error_classes[name] = cls
    return cls


def call(name, args=None):
    """Call the host function `name` with JSON-serialisable `args`; block until it answers and return its value."""
    if os.getpid() != _PID:
        raise RuntimeError("host functions cannot be called from a forked process")
    call_id = next(_call_ids)
    try:
        data = _encode({"type": "call", "id": call_id, "name": name, "args": args})
    except (TypeError, ValueError, RecursionError) as error:
        raise TypeError(f"the arguments of {name} must be JSON values: {error}") from None
    limit = _config.get("maxMessageBytes") or 0
    if limit and len(data) > limit:  # the host would drop it; say why instead
        raise ValueError(f"the arguments of {name} take {len(data) / 2**20:.0f} MB; the bridge carries at most "
                         f"{limit / 2**20:.0f} MB a call (pass a file in the workspace instead)")
    slot = _Slot()
    _pending[call_id] = slot
    try:
        _send(data)
        slot.event.wait()  # a timeout alarm interrupts the wait; a late reply is then dropped
    finally:
        _pending.pop(call_id, None)
    reply = slot.reply
    if reply.get("ok"):
        return reply.get("value")
    error = reply.get("error") or {}
    raise error_class(error.get("type"))(error.get("message", "")) from None


def _read_messages():
    for line in _reader:
        try:
            message = _loads(line)
        except ValueError:
            continue
        except MemoryError:  # the cell filled the memory limit: make room, or lose the message rather than the thread
            _parachute.release()
            try:
                message = _loads(line)
            except (ValueError, MemoryError):
                continue
        kind = message.get("type")
        if kind == "reply":
            slot = _pending.get(message.get("id"))
            if slot is not None:
                slot.reply = message
                slot.event.set()
        elif kind in ("run", "reset"):
            _inbox.append(message)
            _inbox_ready.release()
    # The host closed the pipe: it stopped or died, and nobody is left to serve. Leave at once, even mid-cell, and
    # take our process group along (the host started us as its leader), so that nothing the code started outlives
    # the host either: without bwrap, nothing else would end them.
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(0)


bridge = types.ModuleType("lllm_bridge", "Call functions of the host that runs this kernel.")
bridge.call = call
bridge.error_class = error_class
sys.modules["lllm_bridge"] = bridge


# ---------------------------------------------------------------------------------------------------------------
# Running cells.

_sources = {}
_cell_numbers = iter(range(1, 1 << 62))
_main = types.ModuleType("__main__")
sys.modules["__main__"] = _main  # so that pickle and friends find classes defined in cells
_config = {}


def _fresh_namespace():
    namespace = _main.__dict__
    namespace.clear()
    namespace.update({"__name__": "__main__", "__doc__": None, "__builtins__": builtins})


def _run_prelude():
    prelude = _config.get("prelude") or ""
    if prelude:
        _sources[_PRELUDE_FILE] = prelude
        exec(compile(prelude, _PRELUDE_FILE, "exec", dont_inherit=True), _main.__dict__)


def _leave_if_forked(error=None):
    """A forked copy of the kernel ends with the cell: it must never answer the host or wait for the next run."""
    if os.getpid() == _PID:
        return
    code = 0
    if isinstance(error, SystemExit):
        code = error.code if isinstance(error.code, int) else 1
    elif error is not None:
        code = 1
    os._exit(code)


class _Parachute:
    """Memory held back for the kernel itself. A cell that fills the memory limit leaves no room to format its
    error or to run the next cell (even `del x`); releasing this reserve on MemoryError makes that room."""

    SIZE = 16 * 1024 * 1024

    def __init__(self):
        self.reserve = None
        self.restore()

    def release(self):
        self.reserve = None

    def restore(self):
        if self.reserve is None:
            try:
                self.reserve = bytearray(self.SIZE)
            except MemoryError:
                pass  # still full: the next cell runs on the room the release made


_parachute = _Parachute()


def _run_cell(message):
    _parachute.restore()
    filename = f"<cell-{next(_cell_numbers)}>"
    code = message.get("code") or ""
    _sources[filename] = code
    _capture.begin(_config.get("maxOutputChars") or 0)
    error = None
    try:
        # A prelude may compile cells its own way (code-action's top-level `return`): `__lllm_compile__(code, filename)`.
        custom = _main.__dict__.get("__lllm_compile__")
        compiled = custom(code, filename) if callable(custom) else compile(code, filename, "exec", flags=0x2000, dont_inherit=True)  # 0x2000: top-level await
        _alarm.start(message.get("timeout") or 0)
        if compiled.co_flags & 0x80:  # CO_COROUTINE: the cell uses top-level await
            import asyncio

            asyncio.run(eval(compiled, _main.__dict__))
        else:
            exec(compiled, _main.__dict__)
        _alarm.stop()
    except BaseException as caught:
        _alarm.stop()
        if isinstance(caught, MemoryError):
            _parachute.release()
        _leave_if_forked(caught)
        # exit() ends the cell, not the kernel; a clean exit is no error.
        error = None if isinstance(caught, SystemExit) and caught.code in (None, 0) else caught
    _leave_if_forked()
    isolated = (_config.get("limits") or {}).get("maxProcesses")  # set only in a sandbox with its own pid namespace
    if isolated and (_hit_process_limit(error) or _alarm.fired):
        # A fork bomb, or a cell stopped by its time limit: what it started must not run on past it either.
        _end_fork_bomb()
    printed, overflow = _capture.end()
    return _result(message, printed, overflow, error)


def _hit_process_limit(error):
    return (isinstance(error, BlockingIOError) and error.errno == 11) or (
        isinstance(error, RuntimeError) and "can't start new thread" in str(error))


def _end_fork_bomb():
    """Kill every other process in the sandbox, after a cell hit the process limit or its time limit.

    Copies of a fork bomb fork again as fast as they are killed one by one; kill(-1) signals them all in one step
    (a process with a pending SIGKILL cannot fork). It reaches only our pid namespace (bwrap) and never its init,
    and the limit that leads here is only set under bwrap: on the host, -1 would mean every process of the user.
    """
    import time

    def reap():
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:  # our children stay zombies until reaped
                pass
        except ChildProcessError:
            pass

    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGSTOP)  # a stopped process cannot fork while the others are being killed
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            reap()  # nothing left to signal, but the last ones killed may still be our zombies
            return
        reap()
        time.sleep(0.002)
    _reap_later(time)


def _reap_later(time):
    """Killed children of a big kernel may take seconds to die on a busy host, and would stay zombies (counting
    against the process limit) once the kill loop is over: a thread reaps exactly those, never a later cell's."""
    try:
        left = [int(name) for name in os.listdir("/proc") if name.isdigit() and _parent_of(name) == _PID]
    except OSError:
        return
    if not left:
        return

    def reap():
        end = time.monotonic() + 30
        while left and time.monotonic() < end:
            for pid in list(left):
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        left.remove(pid)
                except ChildProcessError:
                    left.remove(pid)
            time.sleep(0.05)

    threading.Thread(target=reap, name="lllm-reaper", daemon=True).start()


def _parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return int(file.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _result(message, printed, overflow, error):
    limit = _config.get("maxOutputChars") or 0
    indicator = _config.get("truncationIndicator", "")
    cut = False  # cut for size with no output limit asked for: the caller should say that the output is incomplete
    if overflow and not limit:
        printed += _too_much_output_note()
        cut = True
    summary = None
    report = ""
    if error is not None:
        summary = {"type": type(error).__name__, "message": str(error)}
        report = f"SystemExit: {error.code}\n" if isinstance(error, SystemExit) else _format_error(error)
    elif _alarm.fired:  # the cell caught the TimeoutError and finished anyway: the output still says so
        summary = {"type": "TimeoutError", "message": f"cell exceeded the time limit of {_alarm.seconds:g} s"}
        report = f"TimeoutError: {summary['message']}\n"
    if report and printed and not printed.endswith("\n"):
        printed += "\n"
    if not limit or (not overflow and len(printed) + len(report) <= limit):
        output = printed + report
    elif not report:
        output = printed[:limit] + indicator
    else:
        # Cut as plain output is, the head kept and the indicator after it; but the end of a traceback says what
        # went wrong, so its last lines follow the indicator. Together they stay within the limit.
        newline = "" if indicator.endswith("\n") else "\n"
        room = max(1, limit - len(newline))
        tail = _report_tail(report, summary["type"], room // 2, room)
        output = (printed + report)[:max(0, room - len(tail))] + indicator + newline + tail
    return {"type": "result", "id": message.get("id"), "output": output, "error": summary, "timedOut": _alarm.fired,
            "outputCut": cut}


def _report_tail(report, name, share, limit):
    """The last whole lines of a traceback within `share` characters, and always its last line: whole when it fits
    `limit`, else `Name: ...` and the message's end, so that a small limit never loses the error's name."""
    lines = report.splitlines(True)
    tail = ""
    for line in reversed(lines):
        if tail and len(tail) + len(line) > share:
            break
        tail = line + tail
    if len(tail) <= limit:
        return tail
    prefix = name + ": ..."
    room = limit - len(prefix) - 1  # the message's end, between the name and the final newline
    if room < 1:
        return name + "\n"  # the name alone, even past a tiny limit
    return prefix + lines[-1].rstrip("\n")[-room:] + "\n"


def _too_much_output_note():
    limit = _config.get("maxMessageBytes") or 0
    return (f"\n... (output cut: the cell printed more than the {limit / 2**20:.0f} MB one result can carry; "
            "write large output to a file in the workspace instead)\n")


def _fit(reply, data):
    """Cut a result's output until its message fits what the host accepts: a result the host drops would leave it
    waiting for an answer that never comes (escapes in JSON can make a message several times its text)."""
    limit = _config.get("maxMessageBytes") or 0
    if not limit or len(data) <= limit:
        return data
    output = reply.get("output") or ""
    note = _too_much_output_note()
    keep = len(output)
    while len(data) > limit and keep > 0:
        keep = int(keep * (limit - 65536) / len(data) * 0.95)
        reply["output"] = output[:max(keep, 0)] + note
        reply["outputCut"] = True
        data = _encode(reply)
    return data


def _format_error(error, hidden=(_KERNEL_FILE, _PRELUDE_FILE)):
    import linecache
    import traceback

    for filename, source in _sources.items():
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _add_limit_note(error)
    report = traceback.TracebackException(type(error), error, error.__traceback__)
    _keep_user_frames(report, traceback, hidden, set())
    return "".join(report.format())


def _keep_user_frames(report, traceback, hidden, seen):
    """Drop the kernel's and the prelude's frames: the model should see only the code it wrote."""
    if id(report) in seen:
        return
    seen.add(id(report))
    frames = [frame for frame in report.stack if frame.filename not in hidden]
    report.stack = traceback.StackSummary.from_list(frames)
    for nested in (report.__cause__, report.__context__, *(getattr(report, "exceptions", None) or ())):
        if nested is not None:
            _keep_user_frames(nested, traceback, hidden, seen)


def _add_limit_note(error):
    """Say which sandbox limit an error hit, so the model changes its approach instead of retrying."""
    limits = _config.get("limits") or {}
    note = None
    if isinstance(error, MemoryError) and limits.get("memoryMb"):
        note = f"The sandbox limits memory to {limits['memoryMb']} MB."
    elif limits.get("maxProcesses") and (
        (isinstance(error, BlockingIOError) and error.errno == 11)  # EAGAIN, what fork() gets at the limit
        or (isinstance(error, RuntimeError) and "can't start new thread" in str(error))
    ):
        note = (f"The sandbox allows at most {limits['maxProcesses']} processes and threads; the cell reached it, "
                "so every other process in the sandbox was stopped.")
    elif isinstance(error, OSError) and error.errno == 27 and limits.get("fileSizeMb"):  # EFBIG
        note = f"The sandbox limits files to {limits['fileSizeMb']} MB."
    elif isinstance(error, OSError) and error.errno == 28:  # ENOSPC: /workspace or /tmp is full
        sizes = []
        if limits.get("workspaceMb"):
            sizes.append(f"/workspace holds at most {limits['workspaceMb']:g} MB (`sandbox: {{workspace_size: ...}}` in the tactic)")
        if limits.get("fileSizeMb") and limits.get("maxProcesses"):  # a sandbox's own /tmp (not the host's)
            sizes.append(f"/tmp (and /dev/shm, which shares its space) at most {limits['fileSizeMb']:g} MB (`sandbox: {{file_size: ...}}`)")
        if sizes:
            note = "The sandbox is out of space: " + "; ".join(sizes) + ". Write less, or delete files you no longer need."
    if note and hasattr(error, "add_note") and note not in getattr(error, "__notes__", ()):  # notes: Python 3.11+
        error.add_note(note)


def _reset(message):
    _capture.begin(0)
    error = None
    try:
        _fresh_namespace()
        _run_prelude()
    except BaseException as caught:
        error = caught
    printed, overflow = _capture.end()
    _alarm.fired = False
    return _result(message, printed, overflow, error)


# ---------------------------------------------------------------------------------------------------------------
# Start.


def _apply_limits(limits):
    """Lower the process's own rlimits before any user code runs; children inherit them and cannot raise them."""
    import resource

    def lower(which, value, grace=0):
        value = int(-(-value // 1))  # whole units, rounded up: setrlimit takes integers, and "1.5K" is 1536.0 bytes
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value + grace if hard == resource.RLIM_INFINITY else min(value + grace, hard)))

    mb = 1024 * 1024
    lower(resource.RLIMIT_CORE, 0)
    if limits.get("memoryMb"):
        lower(resource.RLIMIT_AS, limits["memoryMb"] * mb)
    if limits.get("cpuSeconds"):
        lower(resource.RLIMIT_CPU, limits["cpuSeconds"], grace=1)  # SIGXCPU at the limit (named in the report), then SIGKILL
    if limits.get("fileSizeMb"):
        lower(resource.RLIMIT_FSIZE, limits["fileSizeMb"] * mb)
    if limits.get("maxProcesses"):
        lower(resource.RLIMIT_NPROC, limits["maxProcesses"])


def _add_site_packages():
    """-S skips `site`, whose .pth files can cost more than the rest of the start: add the site-packages folders
    and the plain folder lines of their .pth files, but run no `import` line."""
    import site

    site.setquit()  # exit() and quit(), which models do call
    site.sethelper()
    for folder in site.getsitepackages():
        if not os.path.isdir(folder) or folder in sys.path:
            continue
        sys.path.append(folder)
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as file:
                    lines = file.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = os.path.join(folder, line)
                if os.path.isdir(path) and path not in sys.path:
                    sys.path.append(path)


def _serve():
    while True:
        _inbox_ready.acquire()
        message = _inbox.pop(0)
        try:
            reply = _run_cell(message) if message.get("type") == "run" else _reset(message)
        except BaseException as error:  # a late alarm or no memory left in the kernel's own code: still answer
            _alarm.stop()
            _parachute.release()
            _leave_if_forked(error)
            reply = {"type": "result", "id": message.get("id"), "output": f"{type(error).__name__}: {error}",
                     "error": {"type": type(error).__name__, "message": str(error)}, "timedOut": _alarm.fired}
        _send(_fit(reply, _encode(reply)))


def _adopt_orphans():
    """Without a sandbox (no pid namespace of our own): become the subreaper of what the code starts, so a process
    that detaches (setsid and a double fork) is re-parented to us instead of to init, and the host, which kills every
    process under the kernel at the end, still finds it. Linux only; elsewhere nothing to do."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _install_seccomp(encoded):
    """Install the host's seccomp filter (classic BPF, base64) on this process, before any thread or user code runs:
    under gVisor, whose kernel grants user namespaces and where runsc applies no filter of ours. A filter cannot be
    removed, and every thread and child inherits it. Fails closed: a kernel that cannot install it exits."""
    try:
        import base64
        import ctypes

        program = base64.b64decode(encoded)

        class _Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        instructions = ctypes.create_string_buffer(program, len(program))
        fprog = _Program(len(program) // 8, ctypes.cast(instructions, ctypes.c_void_p))
        libc = ctypes.CDLL(None, use_errno=True)
        # PR_SET_NO_NEW_PRIVS (38), needed by an unprivileged filter; PR_SET_SECCOMP (22), SECCOMP_MODE_FILTER (2)
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    except Exception as error:  # whatever failed, the code must not run without the filter
        os.write(_HOST_STDERR, f"lllm kernel: cannot install the sandbox's system-call filter: {error}\n".encode())
        os._exit(70)


def _set_up():
    global _reader
    _reader = open(_RFD, "rb", buffering=65536)
    init = _loads(_reader.readline() or b"{}")
    if init.get("seccomp"):
        _install_seccomp(init["seccomp"])
    _config.update(init)
    if init.get("cwd"):
        os.chdir(init["cwd"])
        os.environ["PWD"] = init["cwd"]
    _apply_limits(init.get("limits") or {})
    if not (init.get("limits") or {}).get("maxProcesses"):
        _adopt_orphans()
    _add_site_packages()
    signal.signal(signal.SIGALRM, _alarm.on_signal)
    threading.Thread(target=_pump, name="lllm-output", daemon=True).start()
    threading.Thread(target=_read_messages, name="lllm-bridge", daemon=True).start()


def _start():
    try:
        _set_up()
    except BaseException as error:  # fd 2 is the capture pipe, read by a pump that may not run: tell the host directly
        os.write(_HOST_STDERR, f"lllm kernel: cannot start: {type(error).__name__}: {error}\n".encode("utf-8", "replace"))
        os._exit(70)
    _fresh_namespace()
    _capture.begin(0)
    try:
        _run_prelude()
        ready = {"type": "ready", "pid": _PID}
    except BaseException as error:
        ready = {"type": "ready", "error": _format_error(error, hidden=(_KERNEL_FILE,))}  # the host's own code
    printed, _ = _capture.end()
    if printed:
        _capture.deliver(printed.encode("utf-8", "replace"))  # the prelude's own prints go to the host's stderr
    _send(_encode(ready))
    _serve()


_start()
