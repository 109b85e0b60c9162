"""The rendering oracle: Jinja2 configured as transformers configures it.

transformers, src/transformers/utils/chat_template_utils.py, `_compile_jinja_template` and
`render_jinja_template` (read at commit 5e43e2e892453b405ce6d2cb94387b3a3213f30a):
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with a `{% generation %}`
block tag (its AssistantTracker extension; outside assistant-mask tracking the block renders
its body) and jinja2.ext.loopcontrols; `tojson` replaced by json.dumps with ensure_ascii=False
and the indent/separators/sort_keys options; globals raise_exception and strftime_now; the
context is the special tokens, then messages/tools/documents/add_generation_prompt, then the
caller's kwargs. Plus transformers' continue_final_message cut.

As a script it reads one JSON request on stdin and writes {"prompt": ...} or {"error": ...}.
test/helpers/jinja2_oracle.py imports make_env/render_chat/render_template for its long-running
JSON-lines server, and scripts/gen-jinja-semantics.py for the semantics table.
"""
import json
import sys
import traceback
from datetime import datetime

import jinja2
import jinja2.nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(Extension):
    """`{% generation %}...{% endgeneration %}`: a call block that returns its body, as
    transformers' AssistantTracker does when no assistant mask is being tracked."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def make_env(now=None):
    """The environment; `now` (an ISO datetime string) pins strftime_now's clock for tests."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    clock = (lambda: datetime.fromisoformat(now)) if now else datetime.now
    env.globals["strftime_now"] = lambda fmt: clock().strftime(fmt)
    return env


def error_of(e):
    """An exception as the oracle reports it: Python's class name, message and the template line
    it came from (a syntax error's own lineno, else the last traceback frame Jinja2 rewrote to
    point into the template, filename "<template>")."""
    out = {"error": str(e), "type": type(e).__name__}
    lineno = e.lineno if isinstance(e, jinja2.exceptions.TemplateSyntaxError) else None
    if lineno is None:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "<template>"]
        lineno = frames[-1].lineno if frames else None
    if lineno is not None:
        out["lineno"] = lineno
    return out


def vllm_arguments(messages):
    """vLLM's _postprocess_messages (vllm/entrypoints/chat_utils.py): an assistant's tool-call
    arguments that are not already a dict or list are json.loads'd; empty or missing become {}."""
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            for item in m["tool_calls"]:
                content = item["function"].get("arguments")
                if content:
                    if not isinstance(content, (dict, list)):
                        item["function"]["arguments"] = json.loads(content)
                else:
                    item["function"]["arguments"] = {}
    return messages


def chat_context(req):
    ctx = dict(req.get("special_tokens") or {})
    if req.get("vllm_arguments"):
        vllm_arguments(req["messages"])
    ctx.update(messages=req["messages"], tools=req.get("tools"), documents=req.get("documents"), add_generation_prompt=req.get("add_generation_prompt", False))
    ctx.update(req.get("kwargs") or {})
    return ctx


def cut_final_message(rendered, messages):
    """transformers' continue_final_message: cut the prompt after the last message's content."""
    final_message = messages[-1]["content"]
    if isinstance(final_message, (list, tuple)):
        for block in reversed(final_message):
            if "text" in block:
                final_message = block["text"]
                break
    loc = rendered.rindex(final_message.strip())
    if rendered[loc : loc + len(final_message.lstrip())] == final_message:
        return rendered[: loc + len(final_message.lstrip())]
    return rendered[: loc + len(final_message.strip())]


_compiled = {}


def compile_cached(env, source):
    key = (id(env), source)
    template = _compiled.get(key)
    if template is None:
        if len(_compiled) > 256:
            _compiled.clear()
        template = _compiled[key] = env.from_string(source)
    return template


def render_template(env, source, context):
    """{"text": ...} or an error_of(...) dict; parse errors are reported the same way."""
    try:
        return {"text": compile_cached(env, source).render(**context)}
    except Exception as e:  # noqa: BLE001 - the oracle reports any failure
        return error_of(e)


def render_chat(env, req):
    out = render_template(env, req["template"], chat_context(req))
    if "text" in out and req.get("continue_final_message"):
        try:
            out["text"] = cut_final_message(out["text"], req["messages"])
        except Exception as e:  # noqa: BLE001
            return error_of(e)
    return out


def main():
    req = json.load(sys.stdin)
    out = render_chat(make_env(req.get("now")), req)
    if "text" in out:
        json.dump({"prompt": out["text"]}, sys.stdout, ensure_ascii=False)
    else:
        json.dump({"error": out["error"]}, sys.stdout)


if __name__ == "__main__":
    main()
