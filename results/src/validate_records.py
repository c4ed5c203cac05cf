# The validator behind `drivelab results validate` (results/validate.hpp): built into the binary
# and run as `python3 -c THIS SCHEMA FILE...`, where SCHEMA is the schema's JSON text or @PATH.
# Uses Debian's python3-jsonschema (4.10: Draft202012Validator). A .jsonl file is a journal
# (each line a $defs/journal_line), a .csv a `drivelab report --csv` output (header
# $defs/report_csv_header, each row a $defs/report_csv_row), anything else a run record (the
# schema's root). Prints one line per fault, "FILE[:LINE]: POINTER: message", and one line per
# valid file. Exit 0 all valid, 2 any invalid, 3 the validator cannot run.
import csv
import json
import re
import sys

MAX_FAULTS_PER_FILE = 20


def fail(message):
    print(f"drivelab: results validate: {message}", file=sys.stderr)
    sys.exit(3)


try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
except ImportError as e:
    fail(f"the validator cannot run: {e} (install the Debian package python3-jsonschema)")

schema_arg, files = sys.argv[1], sys.argv[2:]
try:
    if schema_arg.startswith("@"):
        schema_name = schema_arg[1:]
        with open(schema_name, encoding="utf-8") as f:
            schema = json.load(f)
    else:
        schema_name = "the built-in schema"
        schema = json.loads(schema_arg)
    Draft202012Validator.check_schema(schema)
except Exception as e:  # noqa: BLE001 - any failure to load the schema ends the validator
    fail(f"schema {schema_name}: {e}")

validators = {}


def validator(definition):
    """The validator of the schema's root (None) or of one of its $defs."""
    if definition not in validators:
        if definition is not None and definition not in schema.get("$defs", {}):
            fail(f"schema {schema_name} has no $defs/{definition}")
        s = dict(schema)
        if definition is not None:
            s["$ref"] = "#/$defs/" + definition
        validators[definition] = Draft202012Validator(s)
    return validators[definition]


def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def faults(definition, instance):
    """(pointer, message) of every fault, in document order. A missing key is reported at the
    pointer where it belongs; an anyOf/oneOf failure by its most relevant cause."""
    out = []
    for e in validator(definition).iter_errors(instance):
        if e.context:
            e = best_match(e.context) or e
        path = list(e.absolute_path)
        message = e.message
        if e.validator == "required":
            m = re.match(r"^'(.*)' is a required property$", message)
            if m:
                path.append(m.group(1))
                message = "required key missing"
        if len(message) > 300:
            message = message[:300] + "..."
        out.append((path, message))
    out.sort(key=lambda f: [str(p) for p in f[0]])
    return [(pointer(p), m) for p, m in out]


invalid = 0


def report(where, found):
    for p, m in found[:MAX_FAULTS_PER_FILE]:
        print(f"{where}: {p or '(document root)'}: {m}")
    if len(found) > MAX_FAULTS_PER_FILE:
        print(f"{where}: ... and {len(found) - MAX_FAULTS_PER_FILE} more faults")


def check_record(name, text):
    try:
        doc = json.loads(text)
    except ValueError as e:
        report(name, [("", f"not valid JSON: {e}")])
        return False
    found = faults(None, doc)
    report(name, found)
    return not found


def check_journal(name, text):
    """A journal as `drivelab results recover` reads it (docs/results.md, "Journal"): its first
    event is run_start; a last line cut off by a crash (no newline after it, not JSON) is the
    normal state after a kill and is noted, not a fault; so is a line torn by a full disk (the
    start of an event, `{"event":"...`, cut short, with events after it: the journal starts its
    next line with a newline after a failed write, and recover skips it); any other line must be
    an event."""
    ok = True
    cut_last = not text.endswith("\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    events = 0
    first = True
    for number, line in enumerate(lines, start=1):
        if line.strip() == "":
            continue
        try:
            doc = json.loads(line)
        except ValueError as e:
            if cut_last and number == len(lines):
                print(f"{name}:{number}: note: the last line is cut off (a run killed while writing it); "
                      f"recover ignores it")
                continue
            if line.startswith('{"event":"') and not first and number < len(lines):
                print(f"{name}:{number}: note: a write torn by a full disk (the start of an event, cut short); "
                      f"recover skips it")
                continue
            report(f"{name}:{number}", [("", f"not valid JSON: {e}")])
            ok = False
            continue
        events += 1
        if first and not (isinstance(doc, dict) and doc.get("event") == "run_start"):
            report(f"{name}:{number}", [("/event", "a journal starts with the run_start event")])
            ok = False
        first = False
        found = faults("journal_line", doc)
        report(f"{name}:{number}", found)
        ok = ok and not found
    if events == 0:
        report(name, [("", "no events: a journal starts with the run_start event")])
        ok = False
    return ok, events


def check_csv(name, text):
    rows = csv.reader(text.splitlines())
    header = next(rows, None)
    if header is None:
        report(f"{name}:1", [("", "empty file: no header")])
        return False, 0
    found = faults("report_csv_header", header)
    report(f"{name}:1", found)
    if found:
        return False, 0
    ok = True
    count = 0
    for number, row in enumerate(rows, start=2):
        count += 1
        if len(row) != len(header):
            report(f"{name}:{number}", [("", f"{len(row)} fields; the header has {len(header)}")])
            ok = False
            continue
        found = faults("report_csv_row", dict(zip(header, row)))
        report(f"{name}:{number}", found)
        ok = ok and not found
    return ok, count


for name in files:
    try:
        with open(name, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        # Readable, but not text: not a record, a journal or a CSV; the other files are still checked.
        report(name, [("", f"not valid JSON or CSV: not UTF-8 text ({e.reason} at byte {e.start})")])
        invalid += 1
        continue
    except OSError as e:
        fail(f"{name}: cannot read: {e}")
    if name.endswith(".jsonl"):
        ok, n = check_journal(name, text)
        what = f"journal, {n} event{'' if n == 1 else 's'}"
    elif name.endswith(".csv"):
        ok, n = check_csv(name, text)
        what = f"report CSV, {n} rows"
    else:
        ok = check_record(name, text)
        what = "record"
    if ok:
        print(f"{name}: valid ({what})")
    else:
        invalid += 1

print(f"{len(files) - invalid} of {len(files)} files valid against {schema_name}")
sys.exit(2 if invalid else 0)
