"""caffe.net_spec, caffe.coord_map and caffe.draw on nets written in
Python."""

import shutil
import unittest

import caffe
from caffe import layers as L, params as P
from caffe.coord_map import coord_map_from_to, crop
import caffe.draw

import gctest


def fcn():
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 3, 64, 64]))
    n.conv = L.Convolution(n.data, num_output=8, kernel_size=3, pad=1, param=[dict(lr_mult=1), dict(lr_mult=2)])
    n.relu = L.ReLU(n.conv, in_place=True)
    n.pool = L.Pooling(n.relu, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.score = L.Convolution(n.pool, num_output=2, kernel_size=1)
    n.up = L.Deconvolution(n.score, convolution_param=dict(num_output=2, kernel_size=4, stride=2, bias_term=False))
    n.crop = crop(n.up, n.data)
    return n


class TestSpec(gctest.TempDirTest):
    def test_net_spec(self):
        proto = fcn().to_proto()
        names = [l.name for l in proto.layer]
        self.assertEqual(names, ['data', 'conv', 'relu', 'pool', 'score', 'up', 'crop'])
        relu = proto.layer[2]
        self.assertEqual(list(relu.bottom), list(relu.top))
        self.assertEqual(proto.layer[1].convolution_param.pad, [1])
        self.assertEqual([p.lr_mult for p in proto.layer[1].param], [1, 2])
        self.assertEqual(proto.layer[3].pooling_param.pool, P.Pooling.MAX)
        self.assertEqual(list(proto.layer[6].crop_param.offset), [1])
        net = caffe.Net(self.write('fcn.prototxt', proto), caffe.TEST)
        self.assertEqual(net.blobs['crop'].data.shape, (1, 2, 64, 64))
        with self.assertRaisesRegex(TypeError, 'is not a Top'):
            L.ReLU('data')

    def test_coord_map(self):
        n = fcn()
        ax, a, b = coord_map_from_to(n.up, n.data)
        self.assertEqual((ax, a, b), (1, 1, -1))

    def test_draw(self):
        proto = fcn().to_proto()
        dot = caffe.draw.draw_net(proto, 'TB', ext='dot').decode()
        self.assertTrue(dot.startswith('digraph'))
        for name in ('conv', 'pool', 'up', 'crop'):
            self.assertIn('"%s\\n(' % name, dot)
        if shutil.which('dot') is None:
            self.skipTest('no Graphviz dot for the PNG')
        png = self.path('fcn.png')
        caffe.draw.draw_net_to_file(proto, png)
        with open(png, 'rb') as f:
            self.assertEqual(f.read(8), b'\x89PNG\r\n\x1a\n')


if __name__ == '__main__':
    unittest.main()
