# Helpers for the fold end-to-end tests (sourced, not run).

# json_site FILE NAME FIELD: FIELD of site NAME's total in mt-fold --json
# output (one row per line: {"name": "NAME", "total": {...}, ...).
json_site() {
	grep -F "{\"name\": \"$2\", \"total\": {" "$1" | head -n 1 |
		sed -n "s/.*\"total\": {[^}]*\"$3\": \([^,}]*\).*/\1/p"
}

# within LO X HI: exit 0 when LO <= X <= HI (decimal numbers).
within() {
	awk -v lo="$1" -v x="$2" -v hi="$3" 'BEGIN { exit !(lo + 0 <= x + 0 && x + 0 <= hi + 0) }'
}

# gen_sample SEED SITES...: a sample-mode capture as mt-unwind writes it, from
# a seeded simulation: each SITE is NAME:BYTES:SIZE, allocations of SIZE bytes
# totalling BYTES, sampled by a Poisson process of mean gap 524288 bytes
# (exponential gaps, drawn per allocation as the sampler does).
gen_sample() {
	seed=$1
	shift
	awk -v seed="$seed" -v sites="$*" 'BEGIN {
		srand(seed); rate = 524288; n = split(sites, s, " ")
		print "# mt-unwind 1"
		gap = -rate * log(1 - rand()); t = 0; ptr = 4096
		for (i = 1; i <= n; i++) {
			split(s[i], f, ":"); name = f[1]; bytes = f[2]; size = f[3]
			for (done = 0; done < bytes; done += size) {
				pts = 0; left = size
				while (left >= gap) { left -= gap; gap = -rate * log(1 - rand()); pts++ }
				gap -= left; ptr += 16
				if (pts)
					printf "alloc\t1/1\t%d\tgen\tsize=%d ptr=0x%x fn=malloc points=%d rate=%d\t_start;main;%s;malloc end=complete\n", t++, size, ptr, pts, rate, name
			}
		}
	}'
}
