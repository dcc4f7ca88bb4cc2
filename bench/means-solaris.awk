# Per-device means of every numeric column of a Solaris/illumos `iostat -xn` log:
# the awk side of the parsing benchmark (bench/parse.ts).
#
# Title lines ("extended device statistics") and blank lines are skipped; each
# header line ("r/s ... %b device") opens a new report. Device rows are the lines
# with the 10 values and the device name last. As benchdrop's summaries do, the
# first report (counts since boot) is left out when there is more than one.
#
# One array per column, keyed by device: in mawk several times faster than one
# array keyed by (device, column), so awk is measured at its best.
#
# Output: "columns NAME...", "reports N", then "DEVICE COUNT MEAN..." per device.

BEGIN { BOOT = "\001" }

$NF == "device" {
	if (report == 0) {
		header = $0
		sub(/^[ \t]+/, "", header)
		gsub(/[ \t]+/, " ", header)
		if (header != "r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b device") {
			print "means-solaris.awk: not an iostat -xn header: " $0 > "/dev/stderr"
			exit 2
		}
	}
	report++
	next
}

NF == 11 && report > 1 {
	d = $11
	n[d]++
	s1[d] += $1; s2[d] += $2; s3[d] += $3; s4[d] += $4; s5[d] += $5
	s6[d] += $6; s7[d] += $7; s8[d] += $8; s9[d] += $9; s10[d] += $10
	next
}

# The since-boot report, kept under other keys in case it is the only one.
NF == 11 && report == 1 {
	d = BOOT $11
	n[d]++
	s1[d] += $1; s2[d] += $2; s3[d] += $3; s4[d] += $4; s5[d] += $5
	s6[d] += $6; s7[d] += $7; s8[d] += $8; s9[d] += $9; s10[d] += $10
}

END {
	if (report == 0) exit
	print "columns r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b"
	print "reports", report
	for (d in n) {
		boot = substr(d, 1, 1) == BOOT
		if (boot != (report == 1)) continue
		c = n[d]
		printf "%s %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", boot ? substr(d, 2) : d, c,
			s1[d] / c, s2[d] / c, s3[d] / c, s4[d] / c, s5[d] / c, s6[d] / c, s7[d] / c, s8[d] / c, s9[d] / c, s10[d] / c
	}
}
