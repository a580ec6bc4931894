"""Prints the pipeline line of the manifest a generated program carries.

Usage: manifest_pipeline.py FILE, FILE being tgc's --emit=cpp or --emit=cuda
output: the manifest is the C string kManifest, one quoted line per manifest
line; its "pipeline ..." line is what tgc ran before emitting.
"""
import re
import sys

for line in open(sys.argv[1], encoding="utf-8"):
    match = re.match(r'\s*(?:const char kManifest\[\] = )?"pipeline (.*)\\n"', line)
    if match:
        print(match.group(1))
        sys.exit(0)
sys.exit("no pipeline line in the manifest of " + sys.argv[1])
