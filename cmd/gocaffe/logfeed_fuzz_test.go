package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzLogFeed feeds the training-log parser (parse_log and the dashboard,
// `gocaffe train -ui` and `gocaffe ui`) whatever lines the fuzzer writes:
// it must not panic, and what it keeps must encode as the page's JSON and
// as parse_log's CSV.
func FuzzLogFeed(f *testing.F) {
	f.Add([]byte(caffeLog))
	f.Add([]byte("I0101 00:00:00.000000  1 solver.cpp:1] Solving x\n" +
		"I0101 00:00:01.000000  1 solver.cpp:2] Iteration 99999999999999999999999999999999999999999999, lr = 1e400\n" +
		"I0101 00:00:01.000000  1 solver.cpp:3]     Train net output #0: loss = inf (* 1 = nan loss)\n" +
		"I1231 23:59:59.999999  1 solver.cpp:3] Iteration 2, Testing net (#0)\n" +
		"I0101 00:00:00.000000  1 solver.cpp:4]     Test net output #0: <img src=x onerror=alert(1)> = -0\n"))
	f.Add([]byte("I1301 25:61:61.9999999 Solving\nIteration -1\n\n\x00\xff Iteration 1, lr = nan\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		feed := newLogFeed(2026)
		for line := range strings.SplitSeq(string(log), "\n") {
			feed.line(line)
		}
		train, test := feed.tables()
		for _, table := range []*logTable{train, test} {
			if _, err := json.Marshal(tableJSON(table)); err != nil {
				t.Errorf("rows do not encode as JSON: %v", err)
			}
			if len(table.rows) > 0 { // runParseLog writes no file for none
				table.csv(',')
			}
		}
	})
}
