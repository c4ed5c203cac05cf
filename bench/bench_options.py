"""The command line of the benchmark scripts written in Python (bench/*.sh that run `python3 -`):
one parser and one --help for all of them."""
import sys


def parse_options(argv, defaults, script, name):
    """Returns a copy of `defaults` filled from argv: `--some-key VALUE` sets defaults' key
    `some_key` (an int default takes a whole number), a bare word sets `build` (the build
    directory; a second one is an error), -h/--help prints the script's header comment (the lines after #! that start with
    #) and exits 0. An unknown option or a value that is not a whole number exits with a message
    that names the option and `name`."""
    opt = dict(defaults)
    build_given = False
    i = 0
    while i < len(argv):
        a = argv[i]
        key = a[2:].replace("-", "_") if a.startswith("--") else None
        if key in opt and i + 1 < len(argv):
            try:
                opt[key] = int(argv[i + 1]) if isinstance(opt[key], int) else argv[i + 1]
            except ValueError:
                sys.exit(f"{name}: {a} needs a whole number, not '{argv[i + 1]}'")
            i += 2
        elif a in ("-h", "--help"):
            for line in open(script):
                if line.startswith("#!"):
                    continue
                if not line.startswith("#"):
                    break
                print(line.rstrip()[2:])
            sys.exit(0)
        elif not a.startswith("--"):
            if build_given:
                sys.exit(f"{name}: two build directories given ('{opt['build']}', '{a}')")
            opt["build"] = a
            build_given = True
            i += 1
        else:
            sys.exit(f"{name}: unknown option {a} (see --help)")
    return opt
