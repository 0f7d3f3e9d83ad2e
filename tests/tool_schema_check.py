#!/usr/bin/python3
"""Schema checks of the tool definitions cordon prints (issue #5), with jsonschema.

For every golden file and for the live output of `cordon prompt` in each format:
the input schema is a valid JSON Schema (Draft 2020-12), follows OpenAI strict mode
(every property required, additionalProperties false), accepts good inputs and rejects
bad ones; and the wrapper has the exact shape of its ecosystem.
Usage: tool_schema_check.py GOLDEN_ROOT CORDON_BINARY
"""
import json
import pathlib
import subprocess
import sys

import jsonschema

NAME = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}
DESC = {"type": "string", "minLength": 20}
OBJECT_SCHEMA = {"type": "object", "required": ["type", "properties"],
                 "properties": {"type": {"const": "object"}}}


def closed(props, required=None):
    return {"type": "object", "properties": props, "required": required or list(props),
            "additionalProperties": False}


SHAPES = {
    "openai": closed({"type": {"const": "function"},
                      "function": closed({"name": NAME, "description": DESC,
                                          "parameters": OBJECT_SCHEMA,
                                          "strict": {"const": True}})}),
    "openai-responses": closed({"type": {"const": "function"}, "name": NAME,
                                "description": DESC, "parameters": OBJECT_SCHEMA,
                                "strict": {"const": True}}),
    "anthropic": closed({"name": NAME, "description": DESC, "input_schema": OBJECT_SCHEMA}),
    # MCP's Tool (2025-06-18 on): the result's schema and the hints a client shows.
    "mcp": closed({"name": NAME, "description": DESC, "inputSchema": OBJECT_SCHEMA,
                   "outputSchema": OBJECT_SCHEMA,
                   "annotations": closed({"title": {"type": "string", "minLength": 1},
                                          "readOnlyHint": {"type": "boolean"},
                                          "destructiveHint": {"type": "boolean"},
                                          "idempotentHint": {"type": "boolean"},
                                          "openWorldHint": {"type": "boolean"}})}),
}
SCHEMA_KEY = {"openai": lambda d: d["function"]["parameters"],
              "openai-responses": lambda d: d["parameters"],
              "anthropic": lambda d: d["input_schema"], "mcp": lambda d: d["inputSchema"]}


def check_input_schema(schema, where):
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    assert sorted(schema["required"]) == sorted(props), f"{where}: strict mode needs all required"
    assert schema.get("additionalProperties") is False, f"{where}: additionalProperties"
    v = jsonschema.Draft202012Validator(schema)
    lang = props["language"]["enum"][0]
    # Strict mode: the optional fields of later versions (v3: files, collect) are present
    # and null when unused.
    rest = {name: None for name in props if name not in ("code", "language", "timeout")}
    goods = [{"code": "print(1)", "language": lang, "timeout": None, **rest},
             {"code": "true", "language": lang, "timeout": 2.5, **rest}]
    if "files" in props:
        goods.append({"code": "cat in.txt", "language": lang, "timeout": None, **rest,
                      "files": [{"name": "in.txt", "content_base64": "aGk="}]})
    if "collect" in props:
        goods.append({"code": "true", "language": lang, "timeout": None, **rest,
                      "collect": ["*.png"]})
    for good in goods:
        v.validate(good)
    for bad in ({"code": "x", "language": lang, **rest},                      # timeout missing
                {"code": "x", "language": "cobol", "timeout": None, **rest},  # unknown language
                {"code": 1, "language": lang, "timeout": None, **rest},
                {"code": "x", "language": lang, "timeout": None, "extra": 1, **rest}):
        assert not v.is_valid(bad), f"{where}: accepted {bad}"
    if rest:
        assert not v.is_valid({"code": "x", "language": lang, "timeout": None}), \
            f"{where}: accepted a call without {sorted(rest)}"


def check_output_schema(schema, where):
    """A valid schema that takes a result as `cordon run --json` prints it, and no other."""
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    assert "outcome" in schema["properties"], f"{where}: outputSchema without outcome"
    assert not v.is_valid([]), f"{where}: outputSchema accepts a non-object"
    assert not v.is_valid({}), f"{where}: outputSchema accepts an empty object"


def check(fmt, text, where):
    if fmt == "text":
        schema = json.loads(text[text.index("\n{") + 1:])
        check_input_schema(schema, where)
        return
    doc = json.loads(text)
    jsonschema.validate(doc, SHAPES[fmt])
    check_input_schema(SCHEMA_KEY[fmt](doc), where)
    if fmt == "mcp":
        check_output_schema(doc["outputSchema"], where)


def main():
    golden_root, cordon = pathlib.Path(sys.argv[1]), sys.argv[2]
    checked = 0
    for f in sorted(golden_root.glob("*/v*/*")):
        fmt = "text" if f.suffix == ".txt" else f.stem
        check(fmt, f.read_text(), str(f))
        checked += 1
    for fmt in ["text"] + list(SHAPES):
        for backend in ("subprocess", "namespace"):
            out = subprocess.run([cordon, "prompt", "-b", backend, "-f", fmt, "--no-audit",
                                  "--unverified"], capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise SystemExit(f"cordon prompt -b {backend} -f {fmt}: {out.stderr}")
            check(fmt, out.stdout, f"cordon prompt -b {backend} -f {fmt}")
            checked += 1
    print(f"{checked} tool definitions valid")


if __name__ == "__main__":
    main()
