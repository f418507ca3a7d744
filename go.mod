module github.com/gocaffe/gocaffe

go 1.26.0

require (
	github.com/syndtr/goleveldb v1.0.0
	golang.org/x/sys v0.49.0
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/netlib v0.0.0-20190313105609-8cb42192e0e0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/golang/snappy v0.0.0-20180518054509-2e65f85255db // indirect
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e // indirect
)

tool google.golang.org/protobuf/cmd/protoc-gen-go
