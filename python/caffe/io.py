"""Images and arrays in and out of Caffe's formats, as Caffe's caffe.io:
BlobProto and Datum conversions, load_image, resize_image, oversample, and
Transformer, which turns images (H, W, K floats in [0, 1], RGB, as
load_image gives them) into a net's input (K, H, W, scaled, mean taken
off, channels swapped) and back.
"""

import numpy as np

from . import _caffe
from .proto import caffe_pb2


# ---- BlobProto and Datum ---------------------------------------------------------


def blobproto_to_array(blob, return_diff=False):
    """The data (or diff) of a BlobProto as an array of its shape: the old
    num/channels/height/width if it has them, else shape.dim."""
    values = blob.diff if return_diff else blob.data
    arr = np.array(values, dtype=np.float32) if len(values) else np.array(
        blob.double_diff if return_diff else blob.double_data, dtype=np.float64)
    if any(blob.HasField(f) for f in ('num', 'channels', 'height', 'width')):
        shape = (blob.num, blob.channels, blob.height, blob.width)
    else:
        shape = tuple(blob.shape.dim)
    # A shape that does not hold the values (none at all for several) is
    # numpy's ValueError, as in Caffe.
    return arr.reshape(shape)


def array_to_blobproto(arr, diff=None):
    """A BlobProto of an array (shape.dim and data), with diff if given."""
    arr = np.asarray(arr)
    blob = caffe_pb2.BlobProto()
    blob.shape.dim.extend(arr.shape)
    blob.data.extend(arr.astype(np.float32).ravel().tolist())
    if diff is not None:
        diff = np.asarray(diff)
        if diff.shape != arr.shape:
            raise ValueError('diff of shape %s for data of shape %s' % (diff.shape, arr.shape))
        blob.diff.extend(diff.astype(np.float32).ravel().tolist())
    return blob


def arraylist_to_blobprotovector_str(arraylist):
    """A serialized BlobProtoVector of arrays."""
    vec = caffe_pb2.BlobProtoVector()
    vec.blobs.extend(array_to_blobproto(a) for a in arraylist)
    return vec.SerializeToString()


def blobprotovector_str_to_arraylist(s):
    """The arrays of a serialized BlobProtoVector."""
    vec = caffe_pb2.BlobProtoVector()
    vec.ParseFromString(s)
    return [blobproto_to_array(b) for b in vec.blobs]


def array_to_datum(arr, label=None):
    """A Datum of a (C, H, W) array: uint8 arrays as bytes (data), others as
    float_data; label only if given."""
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError('a datum holds a (channels, height, width) array, not %d axes' % arr.ndim)
    d = caffe_pb2.Datum()
    d.channels, d.height, d.width = arr.shape
    if arr.dtype == np.uint8:
        d.data = arr.tobytes()
    else:
        d.float_data.extend(arr.astype(np.float32).ravel().tolist())
    if label is not None:
        d.label = int(label)
    return d


def datum_to_array(datum):
    """The (C, H, W) array of a Datum: uint8 from data, float from
    float_data. The label is datum.label."""
    shape = (datum.channels, datum.height, datum.width)
    if len(datum.data):
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape).copy()
    return np.array(datum.float_data, dtype=np.float32).reshape(shape)


# ---- images ------------------------------------------------------------------------


def load_image(filename, color=True):
    """An image file as float32 (H, W, 3) RGB in [0, 1], or (H, W, 1) gray
    without color. gocaffe's decoders read it (JPEG, PNG, BMP, GIF, ...)."""
    pix, h, w, c = _caffe.load_image(str(filename), bool(color))
    img = np.frombuffer(pix, dtype=np.uint8).reshape(h, w, c)
    return img.astype(np.float32) / 255.0


def _resize_axis(im, size, axis, order):
    """im resized along axis to size: linear (order 1) or nearest (order
    0) interpolation between pixel centres."""
    n = im.shape[axis]
    if n == size:
        return im
    pos = (np.arange(size, dtype=np.float64) + 0.5) * (float(n) / size) - 0.5
    if order == 0 or n == 1:
        idx = np.clip(np.floor(pos + 0.5).astype(np.int64), 0, n - 1)
        return np.take(im, idx, axis=axis)
    pos = np.clip(pos, 0, n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = (pos - lo).astype(np.float32 if im.dtype == np.float32 else np.float64)
    shape = [1] * im.ndim
    shape[axis] = size
    frac = frac.reshape(shape)
    return np.take(im, lo, axis=axis) * (1 - frac) + np.take(im, hi, axis=axis) * frac


def resize_image(im, new_dims, interp_order=1):
    """im (H, W, K) resized to new_dims (height, width), with linear
    (interp_order 1, the default) or nearest-neighbour (0) interpolation.
    Returns float32."""
    im = np.asarray(im, dtype=np.float32)
    if im.ndim == 2:
        im = im[:, :, np.newaxis]
    if interp_order not in (0, 1):
        interp_order = 1  # higher orders: linear (no spline here)
    out = _resize_axis(im, int(new_dims[0]), 0, interp_order)
    out = _resize_axis(out, int(new_dims[1]), 1, interp_order)
    return out.astype(np.float32)


def oversample(images, crop_dims):
    """Ten crops of crop_dims from each image (N, H, W, K or a list): the
    four corners and the centre, and their mirror images. Returns
    (10 N, h, w, K)."""
    images = [np.asarray(im) for im in images]
    im_h, im_w = images[0].shape[:2]
    ch, cw = int(crop_dims[0]), int(crop_dims[1])
    if ch > im_h or cw > im_w:
        raise ValueError('crops of %dx%d from images of %dx%d' % (ch, cw, im_h, im_w))
    starts = [(0, 0), (0, im_w - cw), (im_h - ch, 0), (im_h - ch, im_w - cw),
              ((im_h - ch) // 2, (im_w - cw) // 2)]
    crops = np.empty((10 * len(images), ch, cw, images[0].shape[2]), dtype=np.float32)
    k = 0
    for im in images:
        five = [im[y:y + ch, x:x + cw, :] for y, x in starts]
        for c in five + [c[:, ::-1, :] for c in five]:
            crops[k] = c
            k += 1
    return crops


# ---- Transformer ---------------------------------------------------------------------


class Transformer(object):
    """Turns images into a net's input blobs and back, per input name
    (inputs: {name: blob shape}).

    preprocess(name, image), for an image (H, W, K) as load_image gives:
    resize to the blob's height and width, transpose (set_transpose: (2, 0,
    1) for Caffe's K, H, W), swap channels (set_channel_swap: (2, 1, 0) for
    RGB to BGR), scale to the raw range (set_raw_scale: 255), take off the
    mean (set_mean: per channel or a whole K, H, W image), scale the input
    (set_input_scale). deprocess undoes it.
    """

    def __init__(self, inputs):
        self.inputs = dict(inputs)
        self.transpose = {}
        self.channel_swap = {}
        self.raw_scale = {}
        self.mean = {}
        self.input_scale = {}

    def _check(self, name):
        if name not in self.inputs:
            raise Exception('%r is not one of the net inputs: %s' % (name, sorted(self.inputs)))

    def preprocess(self, in_, data):
        self._check(in_)
        x = np.asarray(data, dtype=np.float32)
        in_dims = tuple(self.inputs[in_][2:])
        if x.shape[:2] != in_dims:
            x = resize_image(x, in_dims)
        if in_ in self.transpose:
            x = x.transpose(self.transpose[in_])
        if in_ in self.channel_swap:
            x = x[list(self.channel_swap[in_]), ...]
        if in_ in self.raw_scale:
            x = x * self.raw_scale[in_]
        if in_ in self.mean:
            x = x - self.mean[in_]
        if in_ in self.input_scale:
            x = x * self.input_scale[in_]
        return np.ascontiguousarray(x, dtype=np.float32)

    def deprocess(self, in_, data):
        self._check(in_)
        x = np.array(data, dtype=np.float32).squeeze()
        if in_ in self.input_scale:
            x = x / self.input_scale[in_]
        if in_ in self.mean:
            x = x + self.mean[in_]
        if in_ in self.raw_scale:
            x = x / self.raw_scale[in_]
        if in_ in self.channel_swap:
            x = x[np.argsort(self.channel_swap[in_]), ...]
        if in_ in self.transpose:
            x = x.transpose(np.argsort(self.transpose[in_]))
        return x

    def set_transpose(self, in_, order):
        """The order of the axes of an input: (2, 0, 1) makes H, W, K images
        Caffe's K, H, W."""
        self._check(in_)
        if len(order) != len(self.inputs[in_]) - 1:
            raise Exception('transpose order has %d axes, the input %d' % (len(order), len(self.inputs[in_]) - 1))
        self.transpose[in_] = tuple(order)

    def set_channel_swap(self, in_, order):
        """The order of the channels, after the transpose: (2, 1, 0) makes
        RGB BGR."""
        self._check(in_)
        if len(order) != self.inputs[in_][1]:
            raise Exception('channel swap of %d channels for an input of %d' % (len(order), self.inputs[in_][1]))
        self.channel_swap[in_] = tuple(order)

    def set_raw_scale(self, in_, scale):
        """The factor from load_image's [0, 1] to the range the net was
        trained on (255 for most)."""
        self._check(in_)
        self.raw_scale[in_] = scale

    def set_mean(self, in_, mean):
        """The mean taken off: one value per channel (K) or an image (K, H,
        W, after the transpose)."""
        self._check(in_)
        mean = np.asarray(mean, dtype=np.float32)
        ms = mean.shape
        if mean.ndim == 1:
            if ms[0] != self.inputs[in_][1]:
                raise ValueError('a mean of %d channels for an input of %d' % (ms[0], self.inputs[in_][1]))
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            if len(ms) == 2:
                ms = (1,) + ms
            if len(ms) != 3:
                raise ValueError('a mean is per channel (K) or an image (K, H, W)')
            if ms != tuple(self.inputs[in_][1:]):
                raise ValueError('a mean of shape %s for an input of shape %s' % (ms, tuple(self.inputs[in_][1:])))
        self.mean[in_] = mean

    def set_input_scale(self, in_, scale):
        """A factor applied after the mean is taken off."""
        self._check(in_)
        self.input_scale[in_] = scale
