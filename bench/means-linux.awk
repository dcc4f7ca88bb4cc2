# Per-device means of every numeric column of a Linux sysstat 12.x `iostat -x`
# log (device name first, discard and flush columns): the awk side of the parsing
# benchmark (bench/parse.ts).
#
# The banner, avg-cpu blocks and blank lines are skipped; each "Device" header
# opens a new report. Device rows are the lines with the device name and the 22
# values. As benchdrop's summaries do, the first report (counts since boot) is
# left out when there is more than one.
#
# One array per column, keyed by device: in mawk several times faster than one
# array keyed by (device, column), so awk is measured at its best.
#
# Output: "columns NAME...", "reports N", then "DEVICE COUNT MEAN..." per device.

BEGIN {
	BOOT = "\001"
	COLUMNS = "r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s wkB/s wrqm/s %wrqm w_await wareq-sz d/s dkB/s drqm/s %drqm d_await dareq-sz f/s f_await aqu-sz %util"
}

$1 == "Device" {
	if (report == 0) {
		header = $0
		gsub(/[ \t]+/, " ", header)
		sub(/ $/, "", header)
		if (header != "Device " COLUMNS) {
			print "means-linux.awk: not a sysstat 12 iostat -x header: " $0 > "/dev/stderr"
			exit 2
		}
	}
	report++
	next
}

NF == 23 && report > 1 {
	d = $1
	n[d]++
	s1[d] += $2; s2[d] += $3; s3[d] += $4; s4[d] += $5; s5[d] += $6; s6[d] += $7; s7[d] += $8
	s8[d] += $9; s9[d] += $10; s10[d] += $11; s11[d] += $12; s12[d] += $13; s13[d] += $14; s14[d] += $15
	s15[d] += $16; s16[d] += $17; s17[d] += $18; s18[d] += $19; s19[d] += $20; s20[d] += $21; s21[d] += $22; s22[d] += $23
	next
}

# The since-boot report, kept under other keys in case it is the only one.
NF == 23 && report == 1 {
	d = BOOT $1
	n[d]++
	s1[d] += $2; s2[d] += $3; s3[d] += $4; s4[d] += $5; s5[d] += $6; s6[d] += $7; s7[d] += $8
	s8[d] += $9; s9[d] += $10; s10[d] += $11; s11[d] += $12; s12[d] += $13; s13[d] += $14; s14[d] += $15
	s15[d] += $16; s16[d] += $17; s17[d] += $18; s18[d] += $19; s19[d] += $20; s20[d] += $21; s21[d] += $22; s22[d] += $23
}

END {
	if (report == 0) exit
	print "columns", COLUMNS
	print "reports", report
	for (d in n) {
		boot = substr(d, 1, 1) == BOOT
		if (boot != (report == 1)) continue
		c = n[d]
		printf "%s %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n",
			boot ? substr(d, 2) : d, c,
			s1[d] / c, s2[d] / c, s3[d] / c, s4[d] / c, s5[d] / c, s6[d] / c, s7[d] / c, s8[d] / c, s9[d] / c, s10[d] / c, s11[d] / c,
			s12[d] / c, s13[d] / c, s14[d] / c, s15[d] / c, s16[d] / c, s17[d] / c, s18[d] / c, s19[d] / c, s20[d] / c, s21[d] / c, s22[d] / c
	}
}
