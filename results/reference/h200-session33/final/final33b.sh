# session 33, final call B: the whole GPU suite
timeout 540 python3 -m pytest -m gpu -q -p no:cacheprovider > $OUT/pytest-gpu-all.txt 2>&1; echo "pytest exit $?"; tail -4 $OUT/pytest-gpu-all.txt
