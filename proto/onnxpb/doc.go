// Package onnxpb holds the Go types generated from proto/onnx.proto, the part
// of ONNX's model format that gocaffe's ONNX export writes: ModelProto,
// GraphProto, NodeProto, TensorProto and the rest, at ONNX's field numbers.
//
// The generated file onnx.pb.go is committed, so a plain `go build` needs no
// protoc. After changing proto/onnx.proto, regenerate it with
//
//	go generate ./proto/...
//
// which needs protoc (Debian's protobuf-compiler).
package onnxpb

//go:generate sh -c "protoc -I.. --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/gocaffe/gocaffe/proto/onnxpb ../onnx.proto"
