"""The oracle for engine-normalized chat rendering, independent of promptenc's TypeScript.

1. Content format: vLLM's detection (vllm/renderers/hf.py `_detect_content_format`, written
   again here over Jinja2's own AST): "openai" when a for-loop iterates `<msg>.content` /
   `<msg>['content']` of a loop variable over `messages` (or over a name assigned from it),
   or a variable named `content`; "string" otherwise or when the walk hits a non-name target.
2. Messages: vLLM's parse_chat_messages for a text-only model (vllm/entrypoints/chat_utils.py:
   `_parse_chat_message_content`, `_postprocess_messages`), plus promptenc's two documented
   rules: `reasoning_content` is read when `reasoning` is absent (vllm-project/vllm#38488), and
   a tool-call arguments mapping prints (and joins with `+`) as the JSON text it came from.
3. Rendering: Jinja2 configured as transformers' chat_template_utils.py configures it.

Reads one JSON request on stdin: {template, messages, tools, add_generation_prompt,
special_tokens, kwargs, normalize: "vllm" | "none", detect_only, now (an ISO time that pins
strftime_now)}, or a list of them. Writes
{"prompt", "format"}, {"format"} for detect_only, or {"error", "format"}; a list for a list.
normalize "none" is transformers' apply_chat_template alone.
"""
import json
import sys
from collections import deque

import jinja2.nodes as nodes


# transformers' environment (trim/lstrip blocks, loopcontrols, {% generation %}, tojson,
# raise_exception, strftime_now with a clock tests can pin) is render_chat.py's, shared.
from render_chat import make_env  # noqa: E402  (this script's directory is on sys.path)


# ---- 1. content format ----


class Undetectable(Exception):
    pass


def elems_access(node, name, key=None):
    if isinstance(node, (nodes.Filter, nodes.Test)):
        return node.node is not None and elems_access(node.node, name, key)
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Slice):
        return elems_access(node.node, name, key)
    if key is None:
        return isinstance(node, nodes.Name) and node.ctx == "load" and node.name == name
    if isinstance(node, nodes.Getitem):
        return elems_access(node.node, name) and isinstance(node.arg, nodes.Const) and node.arg.value == key
    if isinstance(node, nodes.Getattr):
        return elems_access(node.node, name) and node.attr == key
    return False


def detect(source):
    try:
        tree = make_env().parse(source)
    except Exception:
        return "string"
    try:
        names, queue = {"messages"}, deque(["messages"])
        while queue:
            name = queue.popleft()
            for a in tree.find_all(nodes.Assign):
                if elems_access(a.node, name):
                    if not isinstance(a.target, nodes.Name):
                        raise Undetectable()
                    if a.target.name not in names:
                        names.add(a.target.name)
                        queue.append(a.target.name)
        items = []
        for loop in tree.find_all(nodes.For):
            if any(elems_access(loop.iter, n) for n in names):
                if not isinstance(loop.target, nodes.Name):
                    raise Undetectable()
                items.append(loop.target.name)
        for loop in tree.find_all(nodes.For):
            hit = any(elems_access(loop.iter, n, "content") for n in items)
            hit = hit or (isinstance(loop.iter, nodes.Name) and loop.iter.name == "content")
            if hit:
                if not isinstance(loop.target, nodes.Name):
                    raise Undetectable()
                return "openai"
    except Undetectable:
        return "string"
    return "string"


# ---- 2. messages ----


class ArgsDict(dict):
    """A tool-call arguments mapping that prints as the JSON text it came from."""

    def __init__(self, items, text):
        super().__init__(items)
        self._text = text

    def __str__(self):
        return self._text

    def __add__(self, other):
        return self._text + other

    def __radd__(self, other):
        return other + self._text


TEXT_KEYS = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal", "thinking": "thinking"}


def parse_content(content, wrap):
    if content is None:
        parts = []
    elif isinstance(content, str):
        parts = [{"type": "text", "text": content}]
    else:
        parts = content
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append({"type": "text", "text": part} if wrap else part)
            continue
        kind = part.get("type")
        if kind in TEXT_KEYS:
            text = part.get(TEXT_KEYS[kind])
            if text is None and kind in ("text", "refusal"):
                continue
            out.append({"type": "text", "text": text} if wrap else text)
        elif kind == "tool_reference":
            out.append({"type": "tool_reference", "name": part.get("name")} if wrap else part.get("name"))
        else:
            raise ValueError(f"unsupported content part {kind!r} for a text-only model")
    return out if wrap else "\n".join(out)


def arguments(value):
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return ArgsDict({}, "{}")
        return ArgsDict(parsed, value) if isinstance(parsed, dict) else parsed
    if isinstance(value, dict):
        return ArgsDict(value, json.dumps(value, ensure_ascii=False))
    if isinstance(value, list):
        return value
    return ArgsDict({}, "{}")


def normalize(messages, fmt):
    wrap = fmt == "openai"
    conversation = []
    for m in messages:
        role = m["role"]
        out = {"role": role, "content": parse_content(m.get("content"), wrap)}
        if role == "assistant":
            if m.get("tool_calls") is not None:
                out["tool_calls"] = list(m["tool_calls"])
            reasoning = m.get("reasoning")
            if reasoning is None:
                reasoning = m.get("reasoning_content")
            if reasoning is not None:
                out["reasoning"] = reasoning
                out["reasoning_content"] = reasoning
        elif role == "tool":
            if "tool_call_id" in m:
                out["tool_call_id"] = m["tool_call_id"]
            c = out["content"]
            if isinstance(c, list) and not any(isinstance(p, dict) and p.get("type") != "text" for p in c):
                texts = [p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text"]
                out["content"] = "\n".join(texts) if texts else ""
        if isinstance(m.get("name"), str):
            out["name"] = m["name"]
        if isinstance(m.get("task"), str):
            out["task"] = m["task"]
        if role == "developer":
            out["tools"] = m.get("tools")
        conversation.append(out)
    for out in conversation:
        if out["role"] != "assistant" or "tool_calls" not in out or not isinstance(out["tool_calls"], list):
            continue
        if len(out["tool_calls"]) == 0:
            del out["tool_calls"]
            continue
        calls = []
        for tc in out["tool_calls"]:
            tc = dict(tc)
            fn = dict(tc["function"])
            fn["arguments"] = arguments(fn.get("arguments"))
            tc["function"] = fn
            calls.append(tc)
        out["tool_calls"] = calls
    return conversation


# ---- 3. render ----


def handle(req):
    fmt = detect(req["template"])
    if req.get("detect_only"):
        return {"format": fmt}
    try:
        messages = req["messages"]
        if req.get("normalize", "vllm") == "vllm":
            messages = normalize(messages, fmt)
        template = make_env(req.get("now")).from_string(req["template"])
        ctx = dict(req.get("special_tokens", {}))
        ctx.update(messages=messages, tools=req.get("tools"), documents=None, add_generation_prompt=req.get("add_generation_prompt", True))
        ctx.update(req.get("kwargs", {}))
        return {"prompt": template.render(**ctx), "format": fmt}
    except Exception as e:  # noqa: BLE001 - the oracle reports any failure
        return {"error": f"{type(e).__name__}: {e}", "format": fmt}


def main():
    req = json.load(sys.stdin)
    # A list of requests is answered with a list, in one process.
    out = [handle(r) for r in req] if isinstance(req, list) else handle(req)
    json.dump(out, sys.stdout, ensure_ascii=False)


main()
