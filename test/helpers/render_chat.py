"""The rendering oracle: Jinja2 configured as transformers' chat_template_utils.py configures it
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, tojson as json.dumps
with ensure_ascii=False, raise_exception, strftime_now), plus transformers' continue_final_message
cut. Reads one JSON request on stdin, writes {"prompt": ...} or {"error": ...}."""
import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def main():
    req = json.load(sys.stdin)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    template = env.from_string(req["template"])
    ctx = dict(req.get("special_tokens", {}))
    ctx.update(messages=req["messages"], tools=req.get("tools"), documents=None, add_generation_prompt=req.get("add_generation_prompt", False))
    ctx.update(req.get("kwargs", {}))
    try:
        rendered = template.render(**ctx)
    except Exception as e:  # noqa: BLE001 - the oracle reports any failure
        json.dump({"error": str(e)}, sys.stdout)
        return
    if req.get("continue_final_message"):
        final_message = req["messages"][-1]["content"]
        if isinstance(final_message, (list, tuple)):
            for block in reversed(final_message):
                if "text" in block:
                    final_message = block["text"]
                    break
        loc = rendered.rindex(final_message.strip())
        if rendered[loc : loc + len(final_message.lstrip())] == final_message:
            rendered = rendered[: loc + len(final_message.lstrip())]
        else:
            rendered = rendered[: loc + len(final_message.strip())]
    json.dump({"prompt": rendered}, sys.stdout, ensure_ascii=False)


main()
