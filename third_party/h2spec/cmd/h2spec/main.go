// Command h2spec runs h2spec's server conformance tests against one HTTP/2
// server. Upstream's own main (cmd/h2spec, built on cobra) is not part of
// the source vendored here; this one takes the subset of its flags that
// Tailgate's test uses, with the same names and defaults, and the standard
// library's flag package. The exit code is 0 when every test passed, 1
// when some failed, 2 on a usage or run error.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/summerwind/h2spec"
	"github.com/summerwind/h2spec/config"
)

func main() {
	host := flag.String("h", "127.0.0.1", "target host")
	port := flag.Int("p", 0, "target port")
	path := flag.String("P", "/", "target path")
	timeout := flag.Int("o", 2, "seconds each test case may take")
	maxHeaderLen := flag.Int("max-header-length", 4000, "maximum length of an HTTP header")
	junit := flag.String("j", "", "path for a JUnit report")
	strict := flag.Bool("S", false, "run the strict test cases too")
	verbose := flag.Bool("v", false, "verbose log")
	dryRun := flag.Bool("dryrun", false, "print only the titles of the test cases")
	flag.Parse()

	if *port <= 0 && !*dryRun {
		fmt.Fprintln(os.Stderr, "h2spec: -p PORT is required")
		os.Exit(2)
	}
	c := &config.Config{
		Host:         *host,
		Port:         *port,
		Path:         *path,
		Timeout:      time.Duration(*timeout) * time.Second,
		MaxHeaderLen: *maxHeaderLen,
		JUnitReport:  *junit,
		Strict:       *strict,
		DryRun:       *dryRun,
		Verbose:      *verbose,
		Sections:     flag.Args(), // e.g. http2/5.1 or generic/3
	}
	success, err := h2spec.Run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h2spec:", err)
		os.Exit(2)
	}
	if !success {
		os.Exit(1)
	}
}
