"""Classifier: a deploy net that classifies images, as Caffe's
caffe.Classifier."""

import numpy as np

from . import io as cio
from .pycaffe import Net, TEST


class Classifier(Net):
    """A TEST net with a Transformer for its input: predict(images) returns
    the class probabilities of each image (N, classes).

    image_dims is the size images are resized to before cropping to the
    net's input (the input's own size by default); mean, input_scale,
    raw_scale and channel_swap configure the Transformer (see caffe.io).
    """

    def __init__(self, model_file, pretrained_file, image_dims=None, mean=None,
                 input_scale=None, raw_scale=None, channel_swap=None):
        Net.__init__(self, model_file, TEST, weights=pretrained_file)
        if len(self.inputs) != 1:
            raise ValueError('a Classifier takes a net of one input, not %d' % len(self.inputs))
        in_ = self.inputs[0]
        shape = self.blobs[in_].shape
        self.transformer = cio.Transformer({in_: shape})
        self.transformer.set_transpose(in_, (2, 0, 1))
        if mean is not None:
            self.transformer.set_mean(in_, mean)
        if input_scale is not None:
            self.transformer.set_input_scale(in_, input_scale)
        if raw_scale is not None:
            self.transformer.set_raw_scale(in_, raw_scale)
        if channel_swap is not None:
            self.transformer.set_channel_swap(in_, channel_swap)
        self.crop_dims = np.array(shape[2:])
        self.image_dims = np.array(image_dims if image_dims is not None else self.crop_dims)

    def predict(self, inputs, oversample=True):
        """Class probabilities of images (H, W, K each): with oversample,
        the mean over ten crops (corners, centre, mirrored), else of the
        centre crop."""
        h, w = int(self.image_dims[0]), int(self.image_dims[1])
        images = np.zeros((len(inputs), h, w, inputs[0].shape[2]), dtype=np.float32)
        for i, im in enumerate(inputs):
            images[i] = cio.resize_image(im, (h, w))
        ch, cw = int(self.crop_dims[0]), int(self.crop_dims[1])
        if oversample:
            crops = cio.oversample(images, (ch, cw))
        else:
            y, x = (h - ch) // 2, (w - cw) // 2
            crops = images[:, y:y + ch, x:x + cw, :]
        in_ = self.inputs[0]
        batch = np.array([self.transformer.preprocess(in_, c) for c in crops], dtype=np.float32)
        out = self.forward_all(**{in_: batch})
        pred = out[self.outputs[0]]
        if oversample:
            pred = pred.reshape((len(pred) // 10, 10, -1)).mean(axis=1)
        return pred
