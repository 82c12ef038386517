"""A local OpenAI-compatible chat server that answers every prompt with a prepared answer:
the module drtc generated for the task whose reference program the prompt quotes. It
stands in for a kernel-writing model in `bench/reward_throughput.sh`, so the figure is the
verification and timing of answers, not a model's speed.

    python3 bench/replay_answers.py ANSWERS_DIR TASKS_DIR PORT

ANSWERS_DIR holds `<task>.py` answers (each sent in a fenced python block), TASKS_DIR the
task programs of the same names. The task is the one with the most of its lines in the
prompt's first user message. `n` choices are returned when asked (the same answer each).
Standard library only; listens on 127.0.0.1.
"""

import http.server
import json
import os
import sys


def load(answers_dir, tasks_dir):
    table = []
    for name in sorted(os.listdir(answers_dir)):
        if not name.endswith(".py"):
            continue
        task = os.path.join(tasks_dir, name)
        if not os.path.exists(task):
            continue
        lines = {ln.strip() for ln in open(task) if len(ln.strip()) > 8}
        answer = open(os.path.join(answers_dir, name)).read()
        table.append((name, lines, answer))
    return table


def main():
    answers_dir, tasks_dir, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    table = load(answers_dir, tasks_dir)
    if not table:
        sys.exit(f"no answers in {answers_dir} with a task in {tasks_dir}")

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.endswith("/models"):
                self.reply(200, {"object": "list", "data": [{"id": "replay", "object": "model"}]})
            else:
                self.reply(404, {"error": {"message": "not found"}})

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            user = next((m.get("content", "") for m in req.get("messages", [])
                         if m.get("role") == "user"), "")
            prompt = {ln.strip() for ln in user.splitlines()}
            best = max(table, key=lambda t: len(t[1] & prompt))
            if not best[1] & prompt:
                self.reply(400, {"error": {"message": "no answer for this prompt"}})
                return
            content = "```python\n" + best[2] + "\n```"
            n = max(1, int(req.get("n") or 1))
            choices = [{"index": i, "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop"} for i in range(n)]
            self.reply(200, {"id": "replay", "object": "chat.completion", "model": "replay",
                             "choices": choices,
                             "usage": {"prompt_tokens": len(user) // 4,
                                       "completion_tokens": n * len(content) // 4,
                                       "total_tokens": (len(user) + n * len(content)) // 4}})

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"replaying {len(table)} answers on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
