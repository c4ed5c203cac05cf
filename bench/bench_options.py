"""The command line of the benchmark scripts written in Python (bench/*.sh that run `python3 -`):
one parser and one --help for all of them."""
import sys

EXIT_USAGE = 2  # exit 1 is the scripts' "a target was missed"


def usage_error(name, message):
    """Prints `name: message (see --help)` on stderr and exits EXIT_USAGE."""
    print(f"{name}: {message} (see --help)", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def parse_options(argv, defaults, script, name):
    """Returns a copy of `defaults` filled from argv: `--some-key VALUE` or `--some-key=VALUE` sets
    defaults' key `some_key` (an int default takes a whole number), a bare word sets `build` (the
    build directory; a second one is an error), -h/--help prints the script's header comment (the
    lines after #! that start with #) and exits 0. An unknown option, an option without its value
    (at the end, or followed by another option), a value that is not a whole number or a second
    build directory exits with status 2 and a message that names the option and `name`."""
    opt = dict(defaults)
    build_given = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            for line in open(script):
                if line.startswith("#!"):
                    continue
                if not line.startswith("#"):
                    break
                print(line.rstrip()[2:])
            sys.exit(0)
        if a.startswith("-") and len(a) > 1:
            flag, eq, inline = a.partition("=")
            key = flag[2:].replace("-", "_") if flag.startswith("--") else None
            if key not in opt or key == "build":
                usage_error(name, f"unknown option {flag}")
            if eq:
                value, i = inline, i + 1
            elif i + 1 < len(argv) and not (argv[i + 1].startswith("--") and len(argv[i + 1]) > 2):
                value, i = argv[i + 1], i + 2
            else:
                usage_error(name, f"{flag} needs a value" + (f", not the option {argv[i + 1]}" if i + 1 < len(argv) else ""))
            if isinstance(opt[key], int) and not isinstance(opt[key], bool):
                try:
                    value = int(value)
                except ValueError:
                    usage_error(name, f"{flag} needs a whole number, not '{value}'")
            opt[key] = value
            continue
        if build_given:
            usage_error(name, f"two build directories given ('{opt['build']}', '{a}')")
        opt["build"] = a
        build_given = True
        i += 1
    return opt


def check_options(opt, name, positive=(), lists=None, max_repeat=100):
    """The checks every benchmark script makes before it starts anything, each failure a
    usage_error naming the option: the whole numbers in `positive` are >= 1; `repeat` (when an
    option) is at most `max_repeat`; each key of `lists` is a non-empty space-separated list whose
    words are among its value (a tuple of the allowed words), each given once."""
    for k in positive:
        if opt[k] < 1:
            usage_error(name, f"--{k.replace('_', '-')} must be >= 1, not {opt[k]}")
    if "repeat" in opt and opt["repeat"] > max_repeat:
        usage_error(name, f"--repeat {opt['repeat']}: at most {max_repeat}")
    for k, allowed in (lists or {}).items():
        words = opt[k].split()
        if not words:
            usage_error(name, f"--{k.replace('_', '-')} is empty")
        for w in words:
            if w not in allowed:
                usage_error(name, f"--{k.replace('_', '-')}: unknown value '{w}' ({', '.join(allowed)})")
        for w in set(words):
            if words.count(w) > 1:
                usage_error(name, f"--{k.replace('_', '-')}: '{w}' is given {words.count(w)} times")


def exit_on_signals():
    """SIGINT, SIGTERM and SIGHUP (Ctrl-C, timeout(1), a CI job's cancel, a closed terminal) end
    the script with status 128 + the signal's number, as an exception in the main thread, so that
    its `finally` and atexit clean up (stop the private servers, remove the temporary directory)
    and no traceback is printed. Python's default for SIGTERM and SIGHUP is to die at once,
    leaving the servers running."""
    import signal

    def _exit(signum, _frame):
        raise SystemExit(128 + signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _exit)
