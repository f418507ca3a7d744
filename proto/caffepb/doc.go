// Package caffepb holds the Go types generated from proto/caffe.proto, Caffe's
// own schema: NetParameter, SolverParameter, BlobProto, Datum and the rest.
// Files written with these types are byte-compatible with Caffe's.
//
// The generated file caffe.pb.go is committed, so a plain `go build` needs no
// protoc. After changing proto/caffe.proto, regenerate it with
//
//	go generate ./proto/...
//
// which needs protoc (Debian's protobuf-compiler); protoc-gen-go is pinned by
// the tool line in go.mod.
package caffepb

//go:generate sh -c "protoc -I.. --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --go_out=. --go_opt=paths=source_relative --go_opt=Mcaffe.proto=github.com/gocaffe/gocaffe/proto/caffepb ../caffe.proto"
