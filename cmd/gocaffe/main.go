// Command gocaffe is gocaffe's command line tool, with the commands and
// flags of Caffe's `caffe` tool:
//
//	gocaffe train -solver solver.prototxt [-weights a.caffemodel,b.caffemodel | -snapshot x.solverstate] [-gpu 0]
//	gocaffe test -model train_val.prototxt -weights x.caffemodel [-iterations 50] [-gpu 0]
//	gocaffe time -model train_val.prototxt [-iterations 50] [-gpu 0]
//	gocaffe device_query -gpu 0
//	gocaffe convert_mnist_data [-backend lmdb|leveldb] images labels db
//	gocaffe convert_imageset [-gray] [-shuffle] [-resize_width W -resize_height H] [-encoded] ROOTFOLDER/ LISTFILE DB_NAME
//	gocaffe compute_image_mean [-backend lmdb|leveldb] DB [MEAN_FILE]
//	gocaffe convert_annoset -anno_type detection -label_map_file labelmap.prototxt ROOTFOLDER/ LISTFILE DB_NAME
//
// The last four are Caffe's dataset tools (convert_mnist_data,
// convert_imageset, compute_image_mean, and SSD's convert_annoset) as
// subcommands; their flags may also
// follow the positional arguments, as gflags allows.
//
// Flags take one dash or two (-gpu or --gpu). Errors go to standard error
// and the exit status is non-zero.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one gocaffe subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"train":        {"train or finetune a model", runTrain},
	"test":         {"score a model", runTest},
	"time":         {"benchmark model execution time", runTime},
	"device_query": {"show GPU diagnostic information", runDeviceQuery},

	"convert_mnist_data": {"convert MNIST-format IDX files into a Datum database", runConvertMNIST},
	"convert_imageset":   {"convert a list of labelled images into a Datum database", runConvertImageset},
	"compute_image_mean": {"compute the mean image of a Datum database", runComputeImageMean},
	"convert_annoset":    {"convert images and their box annotations into an AnnotatedDatum database (SSD)", runConvertAnnoset},

	"upgrade_net_proto_text":    {"upgrade a net prototxt written for an older Caffe", runUpgradeNetText},
	"upgrade_net_proto_binary":  {"upgrade a binary net (.caffemodel) written for an older Caffe", runUpgradeNetBinary},
	"upgrade_solver_proto_text": {"upgrade a solver prototxt written for an older Caffe", runUpgradeSolverText},
	"classify":                  {"classify images with a trained deploy net", runClassify},
	"extract_features":          {"save blobs of a trained net's TEST pass as Datums", runExtractFeatures},
	"draw":                      {"draw a net's layers and blobs (SVG, PNG or Graphviz DOT)", runDraw},
	"ui":                        {"serve the dashboard over a directory's newest training log", runUI},
	"plot":                      {"draw a training log's loss, outputs and learning rate", runPlot},
	"parse_log":                 {"turn a training log into Caffe's parse_log.py CSV files", runParseLog},
	"export_onnx":               {"export a trained net as an ONNX model", runExportONNX},
}

// errUsage marks errors for which the command's usage is printed.
var errUsage = errors.New("usage")

// exitError ends a command with an exit status other than 1: a run that
// did not fail but did not finish either (stopped by SIGTERM).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes a command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gocaffe: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if err := loadSettings(lookupEnv); err != nil {
		fmt.Fprintf(stderr, "gocaffe %s: %v\n", args[0], err)
		return 1
	}
	if err := cmd.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		var exit *exitError
		if errors.As(err, &exit) {
			fmt.Fprintf(stderr, "gocaffe %s: %v\n", args[0], exit.err)
			return exit.code
		}
		if errors.Is(err, errUsage) {
			// The flag list was printed; say what was missing after it.
			fmt.Fprintf(stderr, "gocaffe %s: %s\n", args[0], strings.TrimSuffix(err.Error(), ": "+errUsage.Error()))
			return 2
		}
		fmt.Fprintf(stderr, "gocaffe %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gocaffe <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-19s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'gocaffe <command> -h' for a command's flags.")
}

// newFlagSet returns a flag set that reports errors to stderr and returns
// them instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gocaffe "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// splitList splits a comma-separated list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseGPUs parses Caffe's -gpu flag: a comma-separated list of device
// ordinals, or "all" (count devices).
func parseGPUs(s string, count func() (int, error)) ([]int, error) {
	if s == "all" {
		n, err := count()
		if err != nil {
			return nil, err
		}
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	}
	var ids []int
	for _, f := range strings.Split(s, ",") {
		var id int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &id); err != nil || id < 0 {
			return nil, fmt.Errorf("-gpu %q: %q is not a device number (want e.g. 0, 0,1 or all)", s, f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
