"""Caffe's protocol buffers for Python: caffe_pb2, which python/build
generates from gocaffe's proto/caffe.proto (the schema Caffe's files use)."""
