# A sample for `cordon run`: shows what the code sees inside the sandbox.
import os
import sys

print("hello from", sys.executable, sys.version.split()[0])
print("working directory:", os.getcwd())
print("environment it was given:", ", ".join(sorted(os.environ)) or "(none)")
