// Package netproto prepares a NetParameter (a Caffe net prototxt or
// .caffemodel) for building, as Caffe's net loading does before its
// Net::Init:
//
//   - Upgrade converts nets written for older Caffe versions in place: V0
//     layers (`layers { layer { type: "conv" } }`, padding layers folded
//     into the layer they feed) and V1 layers (`layers { type: CONVOLUTION
//     }`) to current layers, data transformation fields to
//     transform_param, the net-level input fields to an Input layer, and
//     old BatchNorm parameter specs to lr_mult 0. ReadNetParamsFromTextFile
//     and ReadNetParamsFromBinaryFile read a file and upgrade it.
//   - FilterNet keeps the layers a net state (phase, level, stages)
//     selects by their include and exclude rules (StateMeetsRule).
//   - InsertSplits adds a Split layer wherever a blob feeds several
//     layers, naming the split layers and blobs as Caffe does
//     (SplitLayerName, SplitBlobName).
//
// Package net builds nets from the result; tools that read or rewrite
// prototxt use this package alone.
package netproto
