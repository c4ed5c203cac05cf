#!/usr/bin/env bash
# The bash completion against --help: for every command path (drivelab, drivelab oltp, drivelab
# oltp tpcc, ...), `drivelab PATH <TAB>` and `drivelab PATH -<TAB>` together offer exactly the
# subcommands and option names that `drivelab PATH --help` lists.
#
#   scripts/check-completion.sh DRIVELAB [COMPLETION-SCRIPT]
#
# COMPLETION-SCRIPT defaults to what `DRIVELAB --bash-completion` prints (ctest:
# bash_completion_test); scripts/package-check.sh passes the installed one.
# Exit status: 0 they match on every path, 1 they differ (each difference printed), 2 bad usage.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DRIVELAB [COMPLETION-SCRIPT]" >&2; exit 2; }
bin=$1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/drivelab-completion.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
completion=${2:-$scratch/drivelab.bash}
[ $# -eq 2 ] || "$bin" --bash-completion >"$completion"
mkdir "$scratch/empty"  # completions run here: where they offer file names, they offer none

help_words() {  # help_words PATH...: the subcommands and option names `drivelab PATH --help` lists
  "$bin" "$@" --help | awk '/^[A-Za-z][A-Za-z ]*:$/ {section = $0; next}
    section == "Subcommands:" && /^  [a-z]/ {print $1}
    section != "Subcommands:" && section != "Positionals:" && /^  -/ {n = split($1, names, ","); for (i = 1; i <= n; i++) print names[i]}' | sort
}
subcommands() {  # subcommands PATH...: the subcommands `drivelab PATH --help` lists
  "$bin" "$@" --help | awk '/^[A-Za-z][A-Za-z ]*:$/ {section = $0; next} section == "Subcommands:" && /^  [a-z]/ {print $1}'
}
completion_words() {  # completion_words PATH... PREFIX: what `drivelab PATH PREFIX<TAB>` offers
  (cd "$scratch/empty" && bash -c 'source "$0"; COMP_WORDS=(drivelab "$@"); COMP_CWORD=$#; _drivelab
    [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$@") | sort
}
checked=0
differ=0
check_path() {  # check_path PATH...: this command path, then its subcommands
  local want got s
  want=$(help_words "$@")
  got=$( (completion_words "$@" ""; completion_words "$@" "-") | sort -u)
  if [ -z "$want" ] || [ "$want" != "$got" ]; then
    echo "check-completion: 'drivelab $*' --help lists (<) and the completion offers (>) differ:" \
      "$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
    differ=$((differ + 1))
  fi
  checked=$((checked + 1))
  for s in $(subcommands "$@"); do check_path "$@" "$s"; done
}
check_path
if [ "$differ" -ne 0 ]; then
  echo "check-completion: $differ of $checked command paths differ"
  exit 1
fi
echo "check-completion: the completion matches --help on all $checked command paths"
