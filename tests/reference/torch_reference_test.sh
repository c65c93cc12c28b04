#!/usr/bin/env bash
# ctest: scripts/torch_reference.py check (an independent PyTorch model
# against the engine) with the first python that has PyTorch and numpy;
# skipped (exit 77) with a message when none has them. scripts/deps.sh does
# not install PyTorch; on Debian: apt-get install python3-torch.
# Usage: torch_reference_test.sh CLI WORK_DIR SCRIPT [check | check-parallel]
set -u
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch, numpy" >/dev/null 2>&1; then
    exec "$py" "$3" "${4:-check}" --cli "$1" --dir "$2"
  fi
done
echo "skipped: PyTorch (with numpy) is not importable from python3 or /usr/bin/python3;" \
  "install it (Debian: apt-get install python3-torch) to run the cross-check"
exit 77
