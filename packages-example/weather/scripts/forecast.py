"""Command tool for `forecast`: reads its arguments as JSON on stdin, prints JSON on stdout."""
import json
import sys

args = json.load(sys.stdin)
days = int(args.get("days", 3))
if days < 1:
    print("days must be at least 1", file=sys.stderr)
    sys.exit(1)
print(json.dumps([{"city": args["city"], "day": day + 1, "high": 18 + day, "low": 10 + day} for day in range(days)]))
