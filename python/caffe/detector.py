"""Detector: a deploy net that classifies windows of images (R-CNN style),
as Caffe's caffe.Detector."""

import numpy as np

from . import io as cio
from .pycaffe import Net, TEST


class Detector(Net):
    """A TEST net classifying image windows: detect_windows([(file,
    [(ymin, xmin, ymax, xmax), ...]), ...]) returns, per window, a dict of
    the window, the file name and the net's prediction. context_pad adds
    that many pixels of context around each window (configure_crop)."""

    def __init__(self, model_file, pretrained_file, mean=None, input_scale=None,
                 raw_scale=None, channel_swap=None, context_pad=None):
        Net.__init__(self, model_file, TEST, weights=pretrained_file)
        if len(self.inputs) != 1:
            raise ValueError('a Detector takes a net of one input, not %d' % len(self.inputs))
        in_ = self.inputs[0]
        self.transformer = cio.Transformer({in_: self.blobs[in_].shape})
        self.transformer.set_transpose(in_, (2, 0, 1))
        if mean is not None:
            self.transformer.set_mean(in_, mean)
        if input_scale is not None:
            self.transformer.set_input_scale(in_, input_scale)
        if raw_scale is not None:
            self.transformer.set_raw_scale(in_, raw_scale)
        if channel_swap is not None:
            self.transformer.set_channel_swap(in_, channel_swap)
        self.configure_crop(context_pad)

    def detect_windows(self, images_windows):
        in_ = self.inputs[0]
        crops, where = [], []
        for fname, windows in images_windows:
            image = cio.load_image(fname).astype(np.float32)
            for w in windows:
                crops.append(self.transformer.preprocess(in_, self.crop(image, w)))
                where.append((fname, w))
        if not crops:
            return []
        out = self.forward_all(**{in_: np.asarray(crops)})
        preds = out[self.outputs[0]].squeeze()
        if preds.ndim == 1 and len(crops) == 1:
            preds = preds[np.newaxis]
        return [{'window': np.asarray(w), 'prediction': preds[i], 'filename': f}
                for i, (f, w) in enumerate(where)]

    def detect_selective_search(self, image_fnames):
        raise NotImplementedError('selective search proposals need the selective_search_ijcv_with_python '
                                  'package: compute the windows and call detect_windows')

    def crop(self, im, window):
        """The window (ymin, xmin, ymax, xmax) of im, with context_pad
        pixels of context (warped to the net's input), zero outside the
        image."""
        ymin, xmin, ymax, xmax = [int(v) for v in window]
        crop = im[ymin:ymax, xmin:xmax]
        if self.context_pad:
            in_h, in_w = self.blobs[self.inputs[0]].shape[2:]
            pad = self.context_pad
            # Grow the box so that, warped to the input, pad pixels of
            # context lie around the window.
            sy = (ymax - ymin) / float(in_h - 2 * pad)
            sx = (xmax - xmin) / float(in_w - 2 * pad)
            by0, bx0 = ymin - pad * sy, xmin - pad * sx
            by1, bx1 = ymax + pad * sy, xmax + pad * sx
            h, w = im.shape[:2]
            y0, x0 = int(round(max(by0, 0))), int(round(max(bx0, 0)))
            y1, x1 = int(round(min(by1, h))), int(round(min(bx1, w)))
            box_h, box_w = by1 - by0, bx1 - bx0
            out = np.zeros((in_h, in_w, im.shape[2]), dtype=np.float32)
            if y1 > y0 and x1 > x0:
                part = im[y0:y1, x0:x1]
                ph = max(1, int(round((y1 - y0) / box_h * in_h)))
                pw = max(1, int(round((x1 - x0) / box_w * in_w)))
                oy = int(round((y0 - by0) / box_h * in_h))
                ox = int(round((x0 - bx0) / box_w * in_w))
                ph, pw = min(ph, in_h - oy), min(pw, in_w - ox)
                out[oy:oy + ph, ox:ox + pw] = cio.resize_image(part, (ph, pw))
            crop = out
        return crop

    def configure_crop(self, context_pad):
        self.context_pad = context_pad or 0
