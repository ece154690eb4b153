"""Reading an inventory: bounded YAML (size, nesting, nodes after alias expansion, duplicate keys) with the line
or field path of each problem, then the model (:mod:`harmless.inventory.model`) and the cross-field checks
(:mod:`harmless.inventory.checks`).

Every failure becomes one :class:`harmless.errors.InputError` line naming the file, the field path
(``switches[0].access_ports[1]``) and the fix. Loading changes nothing anywhere and contacts no device (except NetBox
when the inventory has ``netbox:``); it is bounded so that any file loads within 256 MiB and 5 s.
"""
from __future__ import annotations

import typing
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from harmless.errors import InputError, did_you_mean
from harmless.inventory.checks import check_inventory
from harmless.inventory.model import Inventory
from harmless.inventory.secrets import read_regular
from harmless.netbox import fetch_switches

#: bounds on reading an inventory, so that any file loads within 256 MiB and 5 s (issue #11): the file size, the
#: number of YAML nodes (after alias expansion) and the nesting depth. A 200-switch x 48-port inventory is about
#: 0.5 MiB and 65,000 nodes at depth 5; 150,000 nodes load in about 1.5 s on one busy 2 GHz core (YAML is most of it).
MAX_INVENTORY_BYTES = 4 * 1024 * 1024
MAX_YAML_NODES = 150_000
MAX_YAML_DEPTH = 32


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "AccessPort") or "[" in str(part):   # union branch names from pydantic
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


_FIXES = {
    "missing": "add this field (see README, Inventory reference)",
    "extra_forbidden": "remove it or check its spelling (see README, Inventory reference)",
    "literal_error": "use one of the listed values",
    "string_type": "quote the value ('...') so that YAML reads it as text",
}


def _models_in(annotation) -> list[type[BaseModel]]:
    """The pydantic models a field's type can hold (``list[str | AccessPort]`` -> ``[AccessPort]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _known_keys(parent: tuple) -> list[str]:
    """The keys the inventory model allows at ``parent`` (a pydantic error location without its last part): the
    fields of the model found by walking the location from :class:`Inventory` (list indexes and pydantic's union
    branch names, e.g. ``AccessPort``, are stepped over); [] where the walk finds no model."""
    model: type[BaseModel] | None = Inventory
    for part in parent:
        if model is None:
            return []
        if isinstance(part, str) and part in model.model_fields:
            models = _models_in(model.model_fields[part].annotation)
            model = models[0] if len(models) == 1 else None
    return list(model.model_fields) if model is not None else []


def _validation_error(e: ValidationError, src: str) -> InputError:
    """The one line for a pydantic error: the first error, except that an unknown key close to a missing one (a
    misspelling: ``acces_ports`` for ``access_ports``) is reported instead of the missing one; an unknown key is
    said so (not pydantic's "Extra inputs are not permitted"), with the closest allowed key as "did you mean" and the
    fix to rename it, or the keys allowed there."""
    errs = e.errors()
    err = errs[0]
    missing = {(x["loc"][:-1], x["loc"][-1]) for x in errs if x["type"] == "missing" and x["loc"]}
    for x in errs:
        if x["type"] == "extra_forbidden" and any(
                parent == x["loc"][:-1] and did_you_mean(str(x["loc"][-1]), [str(key)]) for parent, key in missing):
            err = x
            break
    fix = _FIXES.get(err["type"], "see README, Inventory reference")
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden" and err["loc"]:
        known = _known_keys(err["loc"][:-1])
        hint = did_you_mean(str(err["loc"][-1]), known)
        close = hint.split("'")[1] if hint else None
        msg = "unknown key" + hint
        fix = f"rename it to {close}" if close else \
            (f"remove it; allowed here: {', '.join(known)}" if known else fix)
    return InputError(f"{src}: {_loc(err['loc'])}", msg, fix)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """PyYAML's safe loader (libyaml when present) used for inventories; :func:`_load_yaml` adds the bounds, and
    implicit dates/integers that Python cannot build (``2024-13-45``, 5000 digits) become errors with their line."""


class _BadValue(yaml.constructor.ConstructorError):
    """A scalar YAML resolved to a type (date, integer) whose value Python refuses."""


def _guarded(construct):
    def build(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as e:
            what = {"int": "an integer", "float": "a number"}.get(node.tag.rsplit(":", 1)[-1], "a date")
            raise _BadValue(None, None, f"{node.value[:40]!r} cannot be read as {what} ({str(e)[:80]})",
                            node.start_mark) from None
    return build


for _tag in ("timestamp", "int", "float"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}",
                            _guarded(getattr(yaml.constructor.SafeConstructor, f"construct_yaml_{_tag}")))


def _yaml_error(e: Exception, src: str, text: str) -> InputError:
    """One line for a PyYAML error: file, line, what (PyYAML's own messages span lines)."""
    if isinstance(e, yaml.reader.ReaderError):
        line = text[:e.position].count("\n") + 1
        char = e.character if isinstance(e.character, int) else ord(e.character)
        return InputError(f"{src} line {line}", f"control character #x{char:04x} is not allowed in YAML",
                          "remove it (save the file as plain UTF-8 text)")
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = f" line {mark.line + 1}" if mark else ""
    problem = " ".join(str(getattr(e, "problem", None) or e).split())
    if isinstance(e, _BadValue):
        return InputError(f"{src}{line}", problem, "quote the value ('...') so that YAML reads it as text")
    return InputError(f"{src}{line}", f"not valid YAML ({problem})", "fix the YAML syntax")


def _path(parts: list) -> str:
    out = ""
    for x in parts:
        out += f"[{x}]" if isinstance(x, int) else (("." if out else "") + str(x))
    return out or "(top level)"


def _scan(text: str, src: str) -> None:
    """Walk the YAML event stream (no objects built) and refuse more than :data:`MAX_YAML_DEPTH` levels or
    :data:`MAX_YAML_NODES` nodes, before the recursive composer sees the document. Raises InputError.

    A fast pass counts; only when a limit is crossed does a second pass find the field path for the message."""
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    leaves = (yaml.ScalarEvent, yaml.AliasEvent)
    depth = nodes = 0
    for ev in yaml.parse(text, Loader=_Loader):
        t = type(ev)
        if t in leaves:
            nodes += 1
        elif t in starts:
            nodes += 1
            depth += 1
            if depth > MAX_YAML_DEPTH:
                break
        elif t in ends:
            depth -= 1
        if nodes > MAX_YAML_NODES:
            break
    else:
        return
    _locate(text, src)
    raise InputError(src, f"more than {MAX_YAML_DEPTH} levels or {MAX_YAML_NODES} YAML nodes",
                     "split the inventory into smaller files")


def _locate(text: str, src: str) -> None:
    """The slow twin of :func:`_scan`: the same limits, with the field path of the node that crosses one."""
    stack: list[list] = []      # per open collection: [is_mapping, current key or index, expecting a key, is a key]
    nodes = 0

    def where() -> str:
        return _path([f[1] for f in stack if f[1] is not None])

    def starting_node() -> bool:    # a node begins: label it in its parent; True if it is a mapping key
        if not stack or not stack[-1][0]:
            return False
        return stack[-1][2]

    def finished(is_key: bool, key=None) -> None:   # a node ended: advance its parent
        if not stack:
            return
        top = stack[-1]
        if top[0]:
            if is_key:
                top[1], top[2] = key if isinstance(key, str) else "?", False
            else:
                top[2] = True
        else:
            top[1] += 1

    for ev in yaml.parse(text, Loader=_Loader):
        if isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            nodes += 1
            if nodes > MAX_YAML_NODES:
                raise InputError(f"{src} line {ev.start_mark.line + 1}: {where()}",
                                 f"more than {MAX_YAML_NODES} YAML nodes", "split the inventory into smaller files")
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) >= MAX_YAML_DEPTH:
                raise InputError(f"{src} line {ev.start_mark.line + 1}: {where()}",
                                 f"nested more than {MAX_YAML_DEPTH} levels deep", "flatten it (see examples/lab.yaml)")
            is_key = starting_node()
            if is_key:
                stack[-1][1] = "?"
            mapping = isinstance(ev, yaml.MappingStartEvent)
            stack.append([mapping, None if mapping else 0, True, is_key])
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            finished(stack.pop()[3], "?")
        elif isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent)):
            finished(starting_node(), getattr(ev, "value", None))


_MERGE = "tag:yaml.org,2002:merge"


def _check_nodes(root, src: str) -> None:
    """Refuse duplicate mapping keys (YAML would silently keep the last) and aliases expanding to more than
    :data:`MAX_YAML_NODES` nodes ("billion laughs"), naming the field path. Linear in the composed graph."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()

    def size(node, path: list) -> int:
        k = id(node)
        if k in sizes:
            return sizes[k]
        if k in busy:
            raise InputError(f"{src} line {node.start_mark.line + 1}: {_path(path)}", "an alias refers to itself",
                             "remove the recursive alias")
        busy.add(k)
        n = 1
        if isinstance(node, yaml.SequenceNode):
            for j, child in enumerate(node.value):
                n += size(child, [*path, j])
        elif isinstance(node, yaml.MappingNode):
            keys: dict[tuple, int] = {}
            for kn, vn in node.value:
                label = kn.value if isinstance(kn, yaml.ScalarNode) else "?"
                if isinstance(kn, yaml.ScalarNode) and kn.tag != _MERGE:
                    key = (kn.tag, kn.value)
                    if key in keys:
                        raise InputError(f"{src}: {_path([*path, label])}",
                                         f"key {label!r} appears twice (lines {keys[key]} and "
                                         f"{kn.start_mark.line + 1}); YAML would silently keep the last",
                                         "keep one of them")
                    keys[key] = kn.start_mark.line + 1
                n += size(kn, path) + size(vn, [*path, label])
        busy.discard(k)
        sizes[k] = n
        if n > MAX_YAML_NODES:
            raise InputError(f"{src}: {_path(path)}", f"expands to more than {MAX_YAML_NODES} YAML nodes through "
                             "aliases", "write it out without nested aliases (&anchor/*alias)")
        return n

    size(root, [])


def _load_yaml(text: str, src: str):
    """YAML text -> Python data, within the bounds above: depth, nodes after alias expansion, no duplicate keys.
    Raises InputError (one line: file, line or field path, fix)."""
    if len(text) > MAX_INVENTORY_BYTES:
        raise InputError(src, f"the inventory is larger than {MAX_INVENTORY_BYTES // 2**20} MiB",
                         "split it into smaller files")
    try:
        _scan(text, src)
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
            if root is None:
                return None
            _check_nodes(root, src)
            return loader.construct_document(root)
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise _yaml_error(e, src, text) from None
    except (ValueError, TypeError, OverflowError) as e:       # e.g. a timestamp like 2024-13-45
        raise InputError(src, f"a value cannot be read ({e})", "quote it to make it a string") from None


def parse_inventory(text: str, src: str = "<inventory>") -> Inventory:
    """Parse and validate inventory YAML text. ``src`` names the file in errors.

    YAML is read within bounds (:data:`MAX_INVENTORY_BYTES`, :data:`MAX_YAML_NODES` after alias expansion,
    :data:`MAX_YAML_DEPTH`); duplicate keys are refused. Touches no device and writes nothing.

    Raises:
        InputError: one line naming ``src``, the field path (or YAML line) and the fix; exit code 2.
    """
    data = _load_yaml(text, src)
    if data is None:
        raise InputError(src, "the inventory is empty", "write server: and switches: (see examples/lab.yaml)")
    if not isinstance(data, dict):
        raise InputError(src, "the inventory must be a YAML mapping with server: and switches:",
                         "see examples/lab.yaml")
    if data.get("netbox") is not None:
        data = {**data, "switches": [*(data.get("switches") or []), *fetch_switches(data["netbox"], src)]}
        if not data["switches"]:
            raise InputError(f"{src}: netbox", "NetBox returned no device with a 'harmless' config context",
                             "check netbox.filter and the devices' config contexts (see README, NetBox)")
    switches = data.get("switches")
    for i, sw in enumerate(switches if isinstance(switches, list) else []):
        if isinstance(sw, dict) and "password" in sw:
            raise InputError(f"{src}: switches[{i}].password", "passwords may not be written in the inventory",
                             "use password_env: VAR or password_file: /path (mode 0600)")
    try:
        inv = Inventory.model_validate(data)
    except ValidationError as e:
        raise _validation_error(e, src) from None
    check_inventory(inv, src)
    return inv


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory file (UTF-8, at most :data:`MAX_INVENTORY_BYTES`).

    Raises:
        InputError: file unreadable, not a regular file (a directory, a FIFO: refused without blocking on it), too
            large, not UTF-8, or invalid (see :func:`parse_inventory`).
    """
    p = Path(path)
    try:
        raw, _st = read_regular(p, MAX_INVENTORY_BYTES + 1)
    except ValueError as e:
        raise InputError(str(p), f"is {e}, not an inventory file", "pass the inventory YAML file with -i") from None
    except OSError as e:
        raise InputError(str(p), f"cannot read the inventory ({e.strerror})", "pass an existing file with -i") from e
    if len(raw) > MAX_INVENTORY_BYTES:
        raise InputError(str(p), f"the inventory is larger than {MAX_INVENTORY_BYTES // 2**20} MiB",
                         "split it into smaller files")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(str(p), "the file is UTF-16, not UTF-8", "save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise InputError(f"{p} line {line}", f"not UTF-8 (byte {raw[e.start]:#04x} at offset {e.start})",
                         "save the file as UTF-8") from None
    return parse_inventory(text, str(p))
