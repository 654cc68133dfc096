"""The code-action prelude: the tools of the host as Python functions, final_answer, artifacts.

Run once in the program's namespace before the program (see PythonKernel's `prelude`). `_LLLM_TOOLS` is set just
before this file by the host: [[python_name, tool_name, [parameter, ...], bare], ...]. Every tool call goes to the
host over the bridge as `lllm_tool`; the host validates the arguments, enforces the call budget and approval, runs
the real tool, and answers with an envelope: {"ok": true, "value": v} | {"ok": true, "handle": {...}} (either with
"files": [handle | resource link, ...] when the result had images or resources) | {"ok": false, "error": {"type",
"code", "message"}}. Exceptions are raised here, so that they carry `.code`.

Both seeds' script forms work. Seed 002: results are plain values, the answer goes to final_answer() or is printed.
Seed 001: a result has `.text`, `.structured`, `.ref`, `.files` and `await .materialize()`, and the script may end
in a top-level `return {...}`. So a small result is its plain value (a dict is a dict) that also carries those
attributes, a large one is a ToolResult handle with the same attributes, `await` accepts any value (awaiting a
plain value gives the value), and a top-level `return value` is final_answer(value).
"""

import lllm_bridge as _lllm_bridge


class ToolError(RuntimeError):
    """A tool failed. `.code` says how (INVALID_ARGUMENTS, TOOL_FAILED, UNKNOWN_TOOL, ...), `.tool` which tool."""

    def __init__(self, message="", code="TOOL_FAILED", tool=None):
        super().__init__(message)
        self.code = code
        self.tool = tool


class MCPToolError(ToolError):
    """An MCP server answered with an error result: str(error) is `MCPToolError: <code>: <message>`, with the
    server's code and message, and its traceback ends `RuntimeError: MCPToolError: <code>: <message>` (seed 002)."""


class ToolApprovalDenied(ToolError):
    """A person (or --approve none) refused a tool that needs approval; the tool did not run."""


class ToolBudgetExceeded(RuntimeError):
    """This program reached its cap on function calls; the call was not made. Let it propagate."""


for _lllm_class in (ToolError, MCPToolError, ToolApprovalDenied, ToolBudgetExceeded):
    _lllm_class.__module__ = "builtins"  # tracebacks print `ToolBudgetExceeded: ...`, not `__main__.ToolBudgetExceeded`
del _lllm_class
# Tracebacks name a class by its qualified name: seed 002 shows an MCP error as `RuntimeError: MCPToolError: ...`.
# The class keeps its own __name__ (type(e).__name__, the cell's error type) and is caught as MCPToolError or
# RuntimeError alike.
MCPToolError.__qualname__ = "RuntimeError"

_LLLM_ERRORS = {"ToolError": ToolError, "MCPToolError": MCPToolError, "ToolApprovalDenied": ToolApprovalDenied,
                "ToolBudgetExceeded": ToolBudgetExceeded}


class ToolResult:
    """A result too large to copy into the program: a handle to it in the host's artifact store.

    It behaves like its value when used (iterate it, index it, len() it, call its methods): the value is loaded
    on first use. `.text` is a preview, `.ref` the artifact's id, `.size` its size in bytes, `.mime` its type;
    `.load()` returns the value, `.materialize()` writes it to a file in the workspace and returns the path.
    Passing the handle to a tool sends only the reference: the host hands the data to the tool directly. The
    files of a result (`.files`) are handles too.
    """

    __slots__ = ("ref", "size", "mime", "text", "_value", "_loaded", "_files")

    def __init__(self, ref, size, mime, text, files=()):
        self.ref, self.size, self.mime, self.text = ref, size, mime, text
        self._loaded = False
        self._value = None
        self._files = tuple(files)

    def load(self):
        if not self._loaded:
            self._value = _lllm_bridge.call("lllm_artifact_load", {"ref": self.ref})
            self._loaded = True
        return self._value

    def materialize(self, path=None):
        import base64
        import os

        reply = _lllm_bridge.call("lllm_artifact_bytes", {"ref": self.ref})
        if path is None:
            path = os.path.join(os.getcwd(), "artifact_" + self.ref + reply["extension"])
        with open(path, "wb") as file:
            file.write(base64.b64decode(reply["data"]))
        return path

    @property
    def structured(self):
        """The value when it is JSON data (a dict or a list), else None (seed 001's structured content)."""
        value = self.load()
        return value if isinstance(value, (dict, list)) else None

    @property
    def files(self):
        """The result's media (seed 001): images, audio and embedded resources as handles, resource links as dicts."""
        return list(self._files)

    def __repr__(self):
        return f"<ToolResult ref={self.ref!r} size={self.size} mime={self.mime!r}>"

    def __str__(self):
        value = self.load()
        return value if isinstance(value, str) else _lllm_json().dumps(value)

    def __iter__(self):
        return iter(self.load())

    def __len__(self):
        return len(self.load())

    def __getitem__(self, key):
        return self.load()[key]

    def __contains__(self, item):
        return item in self.load()

    def __bool__(self):
        return bool(self.load())

    def __eq__(self, other):
        return self.load() == (other.load() if isinstance(other, ToolResult) else other)

    __hash__ = None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.load(), name)  # dict.items, str.splitlines, ...


def _lllm_json():
    import json

    return json


class _LllmValue:
    """Seed 001's result attributes on a small result, which stays its plain value (seed 002): a dict result is a
    dict (isinstance, indexing, json.dumps and == behave as usual) that also has `.text` (the text the model would
    read: the string itself, or JSON), `.structured` (the dict or list, else None), `.ref` (None: nothing was
    stored), `.files` (the result's images and resources, see ToolResult.files), `.load()` and `.materialize()`
    (the value written to a file in the workspace)."""

    __slots__ = ()
    ref = None
    _lllm_files = ()  # an instance with files has its own (the subclasses keep a __dict__ for it)

    @property
    def text(self):
        if isinstance(self, str):
            return str.__str__(self)
        return _lllm_json().dumps(self, ensure_ascii=False)

    @property
    def structured(self):
        return self if isinstance(self, (dict, list)) else None

    @property
    def files(self):
        return list(self._lllm_files)

    def load(self):
        return self

    def __reduce__(self):
        # pickle (multiprocessing) and copy make the plain value: these classes pass for their base by name.
        base = type(self).__mro__[2]
        return (base, (base(self),))

    def materialize(self, path=None):
        import os
        import uuid

        if path is None:
            path = os.path.join(os.getcwd(), "result_" + uuid.uuid4().hex[:12] + (".txt" if isinstance(self, str) else ".json"))
        with open(path, "w", encoding="utf-8") as file:
            file.write(self.text)
        return path


class ToolDict(_LllmValue, dict):
    pass


class ToolList(_LllmValue, list):
    pass


class ToolStr(_LllmValue, str):
    pass


class ToolInt(_LllmValue, int):
    pass


class ToolFloat(_LllmValue, float):
    pass


# Named after their base: type(result).__name__ is "dict" and error messages read "'dict' object ...", as for a
# plain value; only `type(result) is dict` tells them apart.
for _lllm_class in (ToolDict, ToolList, ToolStr, ToolInt, ToolFloat):
    _lllm_class.__name__ = _lllm_class.__qualname__ = _lllm_class.__mro__[2].__name__
    _lllm_class.__module__ = "builtins"
del _lllm_class

_LLLM_VALUE_TYPES = ((bool, None), (dict, ToolDict), (list, ToolList), (str, ToolStr), (int, ToolInt), (float, ToolFloat))


def _lllm_value(value, files=()):
    """A small result as its plain value with seed 001's attributes; True, False and None cannot carry them (a
    result with files is never one of them: its value is its data or its text)."""
    for base, kind in _LLLM_VALUE_TYPES:
        if type(value) is base:
            if kind is None:
                return value
            result = kind(value)
            if files:
                result._lllm_files = tuple(files)
            return result
    return value


async def _lllm_awaitable(value):
    """`await x` in a script: awaits what is awaitable, and gives any other value as it is (seed 001 awaits
    `handle.materialize()`, which returns a path)."""
    import inspect

    return (await value) if inspect.isawaitable(value) else value


def _lllm_return(*value):
    """A top-level `return value` in a script (seed 001): the script's answer, as final_answer(value); a bare
    `return` ends the script, and what it printed is the answer."""
    if value:
        final_answer(value[0])
    raise SystemExit(0)


def __lllm_compile__(code, filename):
    """Compile the program as the kernel would (top-level await), with seed 001's script forms: a `return` outside
    any function becomes _lllm_return(...), and `await x` becomes `await _lllm_awaitable(x)`. Line numbers stay
    those of the program, so its tracebacks point at what the model wrote."""
    import ast

    class Script(ast.NodeTransformer):
        depth = 0

        def visit_Return(self, node):
            node = self.generic_visit(node)
            if self.depth:
                return node
            call = ast.Call(func=ast.Name(id="_lllm_return", ctx=ast.Load()), args=[node.value] if node.value is not None else [], keywords=[])
            return ast.copy_location(ast.Expr(value=ast.copy_location(call, node)), node)

        def visit_Await(self, node):
            node = self.generic_visit(node)
            call = ast.Call(func=ast.Name(id="_lllm_awaitable", ctx=ast.Load()), args=[node.value], keywords=[])
            node.value = ast.copy_location(call, node.value)
            return node

        def _scope(self, node):
            self.depth += 1
            try:
                return self.generic_visit(node)
            finally:
                self.depth -= 1

        visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope

    tree = compile(code, filename, "exec", flags=ast.PyCF_ONLY_AST | 0x2000, dont_inherit=True)
    tree = ast.fix_missing_locations(Script().visit(tree))
    return compile(tree, filename, "exec", flags=0x2000, dont_inherit=True)


def _lllm_wire(value):
    """Arguments as the bridge sends them: a handle becomes {"$artifact": ref}; containers are walked."""
    if isinstance(value, ToolResult):
        return {"$artifact": value.ref}
    if isinstance(value, dict):
        return {key: _lllm_wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lllm_wire(item) for item in value]
    return value


def _lllm_file(info):
    """One of a result's files: a handle to the stored bytes, or a resource link's dict {type, uri, name, ...}."""
    if "ref" in info:
        return ToolResult(info["ref"], info["size"], info["mime"], info["text"])
    return dict(info)


def _lllm_unwrap(envelope, tool):
    if envelope.get("ok"):
        files = [_lllm_file(info) for info in envelope.get("files") or ()]
        handle = envelope.get("handle")
        if handle is not None:
            return ToolResult(handle["ref"], handle["size"], handle["mime"], handle["text"], files)
        return _lllm_value(envelope.get("value"), files)
    error = envelope.get("error") or {}
    kind = _LLLM_ERRORS.get(error.get("type"), ToolError)
    message = error.get("message", "")
    if kind is ToolBudgetExceeded:
        raise ToolBudgetExceeded(message) from None
    raise kind(message, error.get("code", "TOOL_FAILED"), tool) from None


def _lllm_call(tool, args):
    return _lllm_unwrap(_lllm_bridge.call("lllm_tool", {"name": tool, "args": _lllm_wire(args)}), tool)


def _lllm_stub(python_name, tool, parameters):
    def call(*args, **kwargs):
        if len(args) > len(parameters):
            raise TypeError(f"{python_name}() takes {len(parameters)} positional arguments but {len(args)} were given")
        for name, value in zip(parameters, args):
            if name in kwargs:
                raise TypeError(f"{python_name}() got multiple values for argument '{name}'")
            kwargs[name] = value
        return _lllm_call(tool, kwargs)

    call.__name__ = call.__qualname__ = python_name
    return call


class _LllmTools:
    """`tools.<name>(...)`: every tool of the host. An unknown name still reaches the host, which says so."""

    def __init__(self, specs):
        self._names = {}
        for python_name, tool, parameters, _bare in specs:
            self._names[tool] = python_name
            object.__setattr__(self, python_name, _lllm_stub(python_name, tool, parameters))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _lllm_stub(name, name, ())

    def __dir__(self):
        return sorted(self._names.values())

    def __repr__(self):
        return "<tools: " + ", ".join(sorted(self._names.values())) + ">"


class _LllmArtifacts:
    """`artifacts.put(path, mime)`: store a file the program made; returns a handle to pass to tools."""

    def put(self, path, mime="application/octet-stream"):
        import base64

        with open(path, "rb") as file:
            data = file.read()
        import os

        handle = _lllm_bridge.call("lllm_artifact_put", {"name": os.path.basename(path), "mime": mime,
                                                          "data": base64.b64encode(data).decode("ascii")})
        return ToolResult(handle["ref"], handle["size"], handle["mime"], handle["text"])


def final_answer(value):
    """Give the answer (a string, number, list or dict) and end the program."""
    _lllm_bridge.call("lllm_final_answer", {"value": _lllm_wire(value)})
    raise SystemExit(0)


tools = _LllmTools(_LLLM_TOOLS)
artifacts = _LllmArtifacts()
globals().update({spec[0]: getattr(tools, spec[0]) for spec in _LLLM_TOOLS if spec[3]})
del _LLLM_TOOLS
