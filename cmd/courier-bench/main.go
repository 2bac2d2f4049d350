// Command courier-bench measures courier against its speed and memory
// goals and prints the table (see package benchcmp). `make bench` runs it;
// it is not installed with courier.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"

	"github.com/courier-agent/courier/internal/benchcmp"
)

func main() {
	os.Exit(run())
}

func run() int {
	rows := flag.String("rows", "", "measure only the rows whose description matches this regular expression")
	quick := flag.Bool("quick", false, "fewer rounds: a first look, not figures to report")
	keep := flag.Bool("keep", false, "keep the scratch folder")
	flag.Parse()
	filter, err := regexp.Compile(*rows) // "" matches every row
	if err != nil {
		fmt.Fprintf(os.Stderr, "courier-bench: error: -rows: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	env, err := benchcmp.NewEnv(ctx, os.Stderr, *quick)
	if err != nil {
		fmt.Fprintf(os.Stderr, "courier-bench: error: %v\n", err)
		return 1
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "courier-bench: scratch folder %s kept\n", env.Dir)
	} else {
		defer env.Close()
	}
	if !benchcmp.Run(env, benchcmp.All(), filter, os.Stdout) {
		return 1
	}
	return 0
}
