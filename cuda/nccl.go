package cuda

import "errors"

// ErrNoNCCL is returned by every NCCL operation in a build without both the
// `cuda` and the `nccl` tags.
var ErrNoNCCL = errors.New("cuda: gocaffe was built without NCCL (rebuild with -tags cuda,nccl on a machine with libnccl-dev)")

// NCCLUniqueID is the token that every rank of one NCCL communicator must
// be given: rank 0 makes it (NCCLGetUniqueID) and hands it to the others by
// any means (MPI, a TCP rendezvous).
type NCCLUniqueID [128]byte
