package main

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// The upgrade tools of Caffe's tools/: a net or solver written for an older
// Caffe (V0 or V1 layers, data transformation fields in data layers,
// input_dim, old BatchNorm specs; solver_type) rewritten in the current
// format. The input is read as Caffe reads it, so a file Caffe would reject
// is rejected here too.

func runUpgradeNetText(args []string, stdout, stderr io.Writer) error {
	return runUpgradeNet("upgrade_net_proto_text", false, args, stderr)
}

func runUpgradeNetBinary(args []string, stdout, stderr io.Writer) error {
	return runUpgradeNet("upgrade_net_proto_binary", true, args, stderr)
}

// runUpgradeNet reads a NetParameter (text or binary), upgrades it and
// writes it in the same encoding.
func runUpgradeNet(name string, binary bool, args []string, stderr io.Writer) error {
	in, out, err := upgradeArgs(name, "NetParameter", args, stderr)
	if err != nil {
		return err
	}
	p := &caffepb.NetParameter{}
	read, write, kind := protoio.ReadProtoFromTextFile, protoio.WriteProtoToTextFile, "text"
	if binary {
		read, write, kind = protoio.ReadProtoFromBinaryFile, protoio.WriteProtoToBinaryFile, "binary"
	}
	if err := read(in, p); err != nil {
		return fmt.Errorf("failed to parse input %s file as NetParameter: %w", kind, err)
	}
	before := proto.Clone(p)
	if err := netproto.Upgrade(p, in, glog.Logger()); err != nil {
		return err
	}
	if proto.Equal(before, p) {
		glog.Errorf("File already in latest proto format: %s", in)
	}
	if err := write(p, out); err != nil {
		return err
	}
	glog.Infof("Wrote upgraded NetParameter %s proto to %s", kind, out)
	return nil
}

// runUpgradeSolverText reads a solver prototxt, moves solver_type into type
// and writes it.
func runUpgradeSolverText(args []string, stdout, stderr io.Writer) error {
	in, out, err := upgradeArgs("upgrade_solver_proto_text", "SolverParameter", args, stderr)
	if err != nil {
		return err
	}
	p := &caffepb.SolverParameter{}
	if err := protoio.ReadProtoFromTextFile(in, p); err != nil {
		return fmt.Errorf("failed to parse input text file as SolverParameter: %w", err)
	}
	if !netproto.SolverNeedsUpgrade(p) {
		glog.Errorf("File already in latest proto format: %s", in)
	}
	if err := netproto.UpgradeSolver(p); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := protoio.WriteProtoToTextFile(p, out); err != nil {
		return err
	}
	glog.Infof("Wrote upgraded SolverParameter text proto to %s", out)
	return nil
}

// upgradeArgs parses the two positional arguments of an upgrade tool.
func upgradeArgs(name, message string, args []string, stderr io.Writer) (in, out string, err error) {
	fs := newFlagSet(name, stderr)
	setUsage(fs, stderr, "gocaffe "+name+" IN OUT",
		"Reads a "+message+" written for an older Caffe from IN, upgrades it to the\n"+
			"current format and writes it to OUT.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", "", err
	}
	if len(pos) != 2 {
		return "", "", usageError(fs, stderr, "want 2 arguments (input, output), got %d", len(pos))
	}
	return pos[0], pos[1], nil
}
