# mt-fold --json output given to mt report
printf '{\n "format": "mt-fold-report",\n "version": 1\n}\n' > r.json
mt report r.json
