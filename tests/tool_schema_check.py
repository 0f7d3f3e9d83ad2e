#!/usr/bin/python3
"""Schema checks of the tool definitions cordon prints (issue #5), with jsonschema.

For every golden file and for the live output of `cordon prompt` in each format:
the input schema is a valid JSON Schema (Draft 2020-12) with additionalProperties false,
follows OpenAI strict mode in the OpenAI formats (every property required, no "default"),
elsewhere requires every property or only the code (run_code v4 on), accepts good inputs
and rejects bad ones; and the wrapper has the exact shape of its ecosystem.
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


def check_input_schema(schema, where, strict):
    """`strict`: the OpenAI formats, whose strict mode needs every property required and
    refuses "default". Elsewhere a template may require every property (run_code v1 to v3)
    or only the code (v4 on: each other property says what leaving it out means)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    every = sorted(schema["required"]) == sorted(props)
    if strict:
        assert every, f"{where}: strict mode needs all required"
        for name, prop in props.items():
            assert "default" not in prop, f"{where}: strict mode refuses {name}'s default"
    elif not every:
        assert schema["required"] == ["code"], f"{where}: required {schema['required']}"
        for name, prop in props.items():
            if name != "code":
                assert "if left out" in prop["description"], f"{where}: {name}'s default unsaid"
    assert schema.get("additionalProperties") is False, f"{where}: additionalProperties"
    v = jsonschema.Draft202012Validator(schema)
    lang = props["language"]["enum"][0]
    # What a required field that is unused gets: null (strict mode, and the released
    # versions that require every property); an optional one is left out.
    base = {"code": "print(1)", "language": lang}
    base.update({name: None for name in schema["required"] if name not in base})
    goods = [base, {**base, "timeout": 2.5}]
    if "files" in props:
        goods.append({**base, "files": [{"name": "in.txt", "content_base64": "aGk="}]})
    if "collect" in props:
        goods.append({**base, "collect": ["*.png"]})
    if not every:
        goods.append({"code": "print(6*7)"})  # the shortest call a model writes
    for good in goods:
        v.validate(good)
    bads = [{**base, "language": "cobol"}, {**base, "code": 1}, {**base, "extra": 1},
            {name: value for name, value in base.items() if name != "code"}]
    for name in schema["required"]:
        bads.append({n: value for n, value in base.items() if n != name})
    for bad in bads:
        assert not v.is_valid(bad), f"{where}: accepted {bad}"


def check_output_schema(schema, where):
    """A valid schema that takes a result as `cordon run --json` prints it, and no other."""
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    assert "outcome" in schema["properties"], f"{where}: outputSchema without outcome"
    assert not v.is_valid([]), f"{where}: outputSchema accepts a non-object"
    assert not v.is_valid({}), f"{where}: outputSchema accepts an empty object"


def check_other_tool(fmt, text, where):
    """A session tool's (issue #41): valid schemas, closed to unknown properties; its own
    fields are checked by tool_description_test."""
    if fmt == "text":
        schema = json.loads(text[text.index("\n{") + 1:])
    else:
        doc = json.loads(text)
        jsonschema.validate(doc, SHAPES[fmt])
        schema = SCHEMA_KEY[fmt](doc)
        if fmt == "mcp":
            jsonschema.Draft202012Validator.check_schema(doc["outputSchema"])
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema.get("additionalProperties") is False, f"{where}: additionalProperties"
    assert not jsonschema.Draft202012Validator(schema).is_valid({"extra": 1}), where


def check(fmt, text, where):
    if fmt == "text":
        schema = json.loads(text[text.index("\n{") + 1:])
        check_input_schema(schema, where, strict=False)
        return
    doc = json.loads(text)
    jsonschema.validate(doc, SHAPES[fmt])
    check_input_schema(SCHEMA_KEY[fmt](doc), where, strict=fmt.startswith("openai"))
    if fmt == "mcp":
        check_output_schema(doc["outputSchema"], where)


def main():
    golden_root, cordon = pathlib.Path(sys.argv[1]), sys.argv[2]
    checked = 0
    for f in sorted(golden_root.glob("*/v*/*")):
        fmt = "text" if f.suffix == ".txt" else f.stem
        if f.parts[-3] == "run_code":
            check(fmt, f.read_text(), str(f))
        else:
            check_other_tool(fmt, f.read_text(), str(f))
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
