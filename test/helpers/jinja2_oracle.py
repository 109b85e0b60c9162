"""A long-running rendering oracle: Python Jinja2 as transformers configures it (see render_chat.py).

Protocol: JSON lines. Each stdin line is a JSON array of requests; the reply is one stdout line,
a JSON array of results in the same order. A request is
  {"kind": "chat", "template", "messages", "tools", "add_generation_prompt", "special_tokens",
   "kwargs", "continue_final_message", "now", "vllm_arguments"}  (render_chat.py's request;
   vllm_arguments: json.loads tool-call arguments first, as vLLM does), or
  {"kind": "template", "template", "context", "now"}  (a template over a raw context).
A result is {"text": ...} or {"error", "type", "lineno"?}. Compiled templates are cached.
With "repeat": n (bench/render.mjs) the request renders n times more and the result carries
"ms": the render times in milliseconds, measured here (no JSON transfer in them).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_chat import make_env, render_chat, render_template  # noqa: E402

sys.setrecursionlimit(10000)
_envs = {}


def env_for(now):
    env = _envs.get(now)
    if env is None:
        env = _envs[now] = make_env(now)
    return env


def handle_once(env, req):
    if req.get("kind") == "template":
        return render_template(env, req["template"], req.get("context") or {})
    return render_chat(env, req)


def handle(req):
    env = env_for(req.get("now"))
    out = handle_once(env, req)
    repeat = req.get("repeat") or 0
    if repeat and "text" in out:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            handle_once(env, req)
            times.append((time.perf_counter() - t0) * 1000)
        out["ms"] = times
    return out


def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            batch = json.loads(line)
            results = [handle(r) for r in batch]
        except Exception as e:  # noqa: BLE001 - a bad batch must not kill the server
            results = {"fatal": f"{type(e).__name__}: {e}"}
        # ASCII-only replies: a lone surrogate from the input cannot break the UTF-8 stream.
        out.write(json.dumps(results))
        out.write("\n")
        out.flush()


if __name__ == "__main__":
    main()
