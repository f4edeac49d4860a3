#!/bin/sh
# A Stop hook in the shape of the ralph-wiggum plugin's stop hook (written for these
# tests): while .claude/loop.local.md exists, read the LAST assistant line of the
# transcript (grep '"role":"assistant"' | tail -1), join its text blocks, end the
# loop when they hold <promise>PROMISE</promise>, else block with the saved prompt
# as the reason and a systemMessage naming the iteration. Claude's transcript is
# JSONL with compact JSON and content blocks (code.claude.com/docs/en/hooks,
# "transcript_path"); ralph parses it with jq, this one with python3.
set -eu
INPUT=$(cat)
STATE=".claude/loop.local.md"
[ -f "$STATE" ] || exit 0
ITERATION=$(sed -n 's/^iteration: *//p' "$STATE")
PROMISE=$(sed -n 's/^completion_promise: *//p' "$STATE")
TRANSCRIPT=$(printf '%s' "$INPUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["transcript_path"])')
if [ ! -f "$TRANSCRIPT" ]; then
  echo "loop: transcript not found: $TRANSCRIPT" >&2
  exit 1
fi
LAST=$(grep '"role":"assistant"' "$TRANSCRIPT" | tail -1)
if [ -z "$LAST" ]; then
  echo "loop: no assistant message in the transcript" >&2
  exit 1
fi
TEXT=$(printf '%s' "$LAST" | python3 -c '
import json, sys
line = json.load(sys.stdin)
print("\n".join(b["text"] for b in line["message"]["content"] if b["type"] == "text"))
')
case "$TEXT" in
  *"<promise>$PROMISE</promise>"*) rm "$STATE"; exit 0 ;;
esac
NEXT=$((ITERATION + 1))
sed "s/^iteration: .*/iteration: $NEXT/" "$STATE" > "$STATE.tmp" && mv "$STATE.tmp" "$STATE"
PROMPT=$(awk '/^---$/{i++; next} i>=2' "$STATE")
python3 -c '
import json, sys
print(json.dumps({"decision": "block", "reason": sys.argv[1],
                  "systemMessage": "loop iteration " + sys.argv[2]}))
' "$PROMPT" "$NEXT"
