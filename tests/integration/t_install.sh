# shellcheck shell=bash
# make install: the binary, ktlsd(8) made from the option table (every
# option of --help in it, with the same defaults), the sample config (every
# key, and it loads), and make uninstall taking it all back without
# touching an edited config.

builddir=$(dirname "$KTLSD")
DEST="$T/dest"

# in_dest NAME PATH-PATTERN: the one installed file matching the find -path
# pattern, or empty.
in_dest() {
	find "$DEST" -path "$1" -type f 2>/dev/null | head -n 1
}

# help_options: the option names --help lists, one a line, without "--".
help_options() {
	"$KTLSD" --help | sed -nE 's/^  --([a-z0-9-]+).*/\1/p'
}

# help_defaults: the options whose --help entry has a default.
help_defaults() {
	"$KTLSD" --help | awk '
		/^  --/ { name = $1; sub(/^--/, "", name) }
		/^  [^ -]|^[^ ]/ { name = "" }
		/default: / && name != "" { print name; name = "" }'
}

# squeeze: whitespace runs as one blank, none after ':' (the manual and
# --help wrap cipher lists at different colons).
squeeze() {
	tr -s ' \n' '  ' | sed 's/: /:/g'
}

# syscall_set FILTER...: the calls a unit's SystemCallFilter= values name,
# groups expanded (systemd-analyze syscall-filter), one a line, sorted.
syscall_set() {
	local f
	for f in "$@"; do
		case $f in
		@*) systemd-analyze syscall-filter "$f" | awk 'NR > 1 && $1 !~ /^#/ && NF { print $1 }' |
			while read -r s; do syscall_set "$s"; done ;;
		*) echo "$f" ;;
		esac
	done | sort -u
}

install_in() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$builddir" -s "$@" DESTDIR="$DEST" \
		>>"$T/make.log" 2>&1
}

if [ ! -f "$builddir/Makefile" ]; then
	pass "make install: $KTLSD is not in a build folder; skipped"
	return 0 2>/dev/null || exit 0
fi

install_in install
expect_eq "make install DESTDIR=...: exit 0" "$?" 0
bin=$(in_dest '*/sbin/ktlsd')
page=$(in_dest '*/man8/ktlsd.8')
conf=$(in_dest '*/etc/ktlsd/ktlsd.conf')
sample=$(in_dest '*/etc/ktlsd/ktlsd.conf.sample')
for f in bin page conf sample; do
	expect_ne "installed: $f" "${!f}" ""
done
check "the binary is executable" test -x "$bin"
expect_eq "... and the one built" "$("$bin" --version)" "$("$KTLSD" --version)"

# ---- ktlsd(8) ----------------------------------------------------------------
MANWIDTH=80 man -l "$page" >"$T/man.txt" 2>"$T/man.err"
expect_eq "man -l renders ktlsd(8)" "$?" 0
expect_eq "... without a warning" "$(head -c 300 "$T/man.err")" ""
for s in NAME SYNOPSIS DESCRIPTION OPTIONS SIGNALS SYSTEMD "EXIT STATUS" FILES "SEE ALSO"; do
	grep -q "^$s\$" "$T/man.txt" || missing_section="${missing_section:-} $s"
done
expect_eq "... with its sections" "${missing_section:-}" ""
check "... NAME says what it is" grep -q '^ *ktlsd - static-file HTTPS server' "$T/man.txt"
missing=
for o in $(help_options); do
	grep -qE -- "^ +--$o( |\$)" "$T/man.txt" || missing="$missing --$o"
done
expect_eq "every option of --help has its entry in the manual" "${missing# }" ""
check "... and --help has at least 40" test "$(help_options | wc -l)" -ge 40
# The defaults and ranges, as --help prints them.
man_text=$(squeeze <"$T/man.txt")
differ=
while IFS= read -r note; do
	[[ $man_text == *"$note"* ]] || differ="$differ $note"
done < <("$KTLSD" --help | squeeze | grep -oE '\((([0-9.]+ to [0-9.]+); )?default:[^)]*\)')
expect_eq "every default and range of --help is in the manual" "${differ# }" ""
check "the manual names the installed config file" grep -q "$(dirname "${conf#"$DEST"}")/ktlsd.conf" "$T/man.txt"

# ---- the sample config ----------------------------------------------------
check "ktlsd.conf is installed as the sample" cmp -s "$conf" "$sample"
absent=
for o in $(help_options); do
	grep -qE "^#$o( |\$)" "$sample" && continue
	# Not in the file: only right for an option the file refuses.
	printf '%s x\n' "$o" >"$T/one.conf"
	"$KTLSD" --config "$T/one.conf" --root / >/dev/null 2>"$T/one.err"
	grep -q "only valid on the command line" "$T/one.err" || absent="$absent $o"
done
expect_eq "the sample has every key the config file takes" "${absent# }" ""
# Every default, uncommented, loads (with what has no default added).
PORT=$(freeport)
{
	for o in $(help_defaults); do
		grep -E "^#$o " "$sample" | sed 's/^#//'
	done
	printf 'root %s\nlisten 127.0.0.1:%s\ncert %s\nkey %s\n' "$FIX/root" "$PORT" "$FIX/ec.pem" "$FIX/ec.key"
} >"$T/sample.conf"
check "... its defaults, uncommented, are more than 30 lines" test "$(wc -l <"$T/sample.conf")" -gt 30
"$KTLSD" --test-config --config "$T/sample.conf" >"$T/sample.out" 2>&1
expect_eq "... and load (--test-config)" "$?" 0

# ---- make uninstall ---------------------------------------------------------
install_in uninstall
expect_eq "make uninstall: exit 0" "$?" 0
expect_eq "... leaves no file behind" "$(find "$DEST" -type f | head -n 3)" ""
# An administrator's config survives both directions.
install_in install
echo "root /srv/www" >>"$conf"
cp "$conf" "$T/edited.conf"
install_in install
check "make install again keeps an edited ktlsd.conf" cmp -s "$conf" "$T/edited.conf"
install_in uninstall
check "make uninstall keeps an edited ktlsd.conf" cmp -s "$conf" "$T/edited.conf"
expect_eq "... and removes everything else" "$(find "$DEST" -type f | grep -vxF "$conf" | head -n 3)" ""
