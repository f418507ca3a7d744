"""pycaffe's interface beyond the passes: constructors, weights, solvers
(step, solve, snapshot, restore, callbacks, get_solver), batching,
MemoryData, errors, caffe.io and Classifier."""

import os
import struct
import unittest
import zlib

import numpy as np

import caffe
from caffe import layers as L
from caffe.proto import caffe_pb2

import gctest


def deploy_net(batch=2):
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[batch, 3, 8, 8]))
    n.conv = L.Convolution(n.data, num_output=4, kernel_size=3, weight_filler=dict(type='xavier'))
    n.score = L.InnerProduct(n.conv, num_output=5, weight_filler=dict(type='xavier'))
    n.prob = L.Softmax(n.score)
    return n.to_proto()


def train_net():
    n = caffe.NetSpec()
    n.data, n.label = L.DummyData(shape=[dict(dim=[8, 3, 8, 8]), dict(dim=[8])],
                                  data_filler=[dict(type='gaussian', std=1), dict(type='constant', value=1)],
                                  ntop=2)
    n.conv = L.Convolution(n.data, num_output=4, kernel_size=3, weight_filler=dict(type='xavier'))
    n.score = L.InnerProduct(n.conv, num_output=5, weight_filler=dict(type='xavier'))
    n.loss = L.SoftmaxWithLoss(n.score, n.label)
    return n.to_proto()


def png(path, rgb):
    """Writes an 8-bit RGB PNG of an (H, W, 3) uint8 array."""
    h, w, _ = rgb.shape
    raw = b''.join(b'\x00' + rgb[y].tobytes() for y in range(h))

    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))


class TestNet(gctest.TempDirTest):
    def test_constructors_and_weights(self):
        proto = self.write('deploy.prototxt', deploy_net())
        a = caffe.Net(proto, caffe.TEST)
        weights = self.path('w.caffemodel')
        a.save(weights)
        b = caffe.Net(proto, caffe.TEST, weights=weights)
        with self.assertWarns(DeprecationWarning):
            c = caffe.Net(proto, weights, caffe.TEST)
        d = caffe.Net(proto, phase=caffe.TEST)
        d.copy_from(weights)
        for other in (b, c, d):
            for name in a.params:
                for p, q in zip(a.params[name], other.params[name]):
                    np.testing.assert_array_equal(p.data, q.data)
        self.assertEqual(a.inputs, ['data'])
        self.assertEqual(list(a.blob_loss_weights.values()), [0, 0, 0, 0])
        self.assertEqual(a.outputs, ['prob'])
        self.assertEqual(list(a.layer_dict), ['data', 'conv', 'score', 'prob'])
        self.assertEqual([l.type for l in a.layers], ['Input', 'Convolution', 'InnerProduct', 'Softmax'])
        self.assertEqual(a.blobs['data'].num, 2)
        self.assertEqual(a.blobs['data'].channels, 3)
        self.assertEqual(a.blobs['score'].height, 1)
        self.assertEqual(a.blobs['data'].count, 2 * 3 * 8 * 8)

    def test_errors(self):
        proto = self.write('deploy.prototxt', deploy_net())
        with self.assertRaises(IOError):
            caffe.Net(self.path('missing.prototxt'), caffe.TEST)
        with self.assertRaises(ValueError):
            caffe.Net(proto, 7)
        bad = self.write('bad.prototxt', 'layer { name: "x" type: "NoSuchLayer" top: "x" }')
        with self.assertRaisesRegex(RuntimeError, 'NoSuchLayer'):
            caffe.Net(bad, caffe.TEST)
        net = caffe.Net(proto, caffe.TEST)
        with self.assertRaises(ValueError):
            net.forward(nosuch=np.zeros((2, 3, 8, 8)))
        with self.assertRaises(ValueError):
            net.forward(start='nosuch')

    def test_forward_all(self):
        net = caffe.Net(self.write('deploy.prototxt', deploy_net(batch=4)), caffe.TEST)
        x = np.random.RandomState(1).randn(10, 3, 8, 8).astype(np.float32)
        out = net.forward_all(data=x, blobs=['score'])
        self.assertEqual(out['prob'].shape, (10, 5))
        self.assertEqual(out['score'].shape, (10, 5))
        net.forward(data=x[8:10].repeat(2, axis=0))
        np.testing.assert_allclose(out['prob'][8:10], net.blobs['prob'].data[[0, 2]], rtol=1e-5)
        fwd, back = net.forward_backward_all(data=x[:4])
        self.assertEqual(fwd['prob'].shape, (4, 5))
        self.assertEqual(back['data'].shape, (4, 3, 8, 8))

    def test_memory_data(self):
        proto = self.write('mem.prototxt', str(caffe_pb2.NetParameter(layer=[caffe_pb2.LayerParameter(
            name='data', type='MemoryData', top=['data', 'label'],
            memory_data_param=caffe_pb2.MemoryDataParameter(batch_size=2, channels=1, height=2, width=2))])))
        net = caffe.Net(proto, caffe.TEST)
        x = np.arange(16, dtype=np.float32).reshape(4, 1, 2, 2)
        net.set_input_arrays(x, np.array([0, 1, 2, 3], np.float32))
        net.forward()
        np.testing.assert_array_equal(net.blobs['data'].data, x[:2])
        np.testing.assert_array_equal(net.blobs['label'].data.ravel(), [0, 1])
        net.forward()
        np.testing.assert_array_equal(net.blobs['label'].data.ravel(), [2, 3])

    def test_python_layer_exception(self):
        with open(self.path('raising.py'), 'w') as f:
            f.write('import caffe\nclass Raising(caffe.Layer):\n'
                    '    def setup(self, bottom, top):\n        raise KeyError("no such thing")\n')
        import sys
        sys.path.insert(0, self.dir)
        try:
            proto = self.write('py.prototxt', 'layer { name: "p" type: "Python" top: "t" '
                               'python_param { module: "raising" layer: "Raising" } }')
            with self.assertRaises(KeyError):
                caffe.Net(proto, caffe.TRAIN)
            proto = self.write('py2.prototxt', 'layer { name: "p" type: "Python" top: "t" '
                               'python_param { module: "no_such_module" layer: "X" } }')
            with self.assertRaises(ImportError):
                caffe.Net(proto, caffe.TRAIN)
        finally:
            sys.path.remove(self.dir)

    def test_layer_type_list(self):
        types = caffe.layer_type_list()
        for t in ('Convolution', 'Data', 'Python', 'SoftmaxWithLoss'):
            self.assertIn(t, types)


class TestSolver(gctest.TempDirTest):
    def solver_file(self, type_='SGD', max_iter=20):
        net = self.write('train.prototxt', train_net())
        s = caffe_pb2.SolverParameter(train_net=net, base_lr=0.01, momentum=0.9, lr_policy='fixed',
                                      max_iter=max_iter, snapshot_after_train=False, display=0, type=type_,
                                      snapshot_prefix=self.path('snap'))
        if type_ in ('AdaGrad', 'RMSProp', 'AdaDelta', 'Adam'):
            s.ClearField('momentum')
            if type_ in ('AdaDelta', 'Adam'):
                s.momentum = 0.9
        return self.write('solver_%s.prototxt' % type_, str(s))

    def test_types(self):
        for cls in (caffe.SGDSolver, caffe.NesterovSolver, caffe.AdaGradSolver, caffe.RMSPropSolver,
                    caffe.AdaDeltaSolver, caffe.AdamSolver):
            f = self.solver_file(cls._type)
            s = caffe.get_solver(f)
            self.assertIs(type(s), cls)
            self.assertEqual(s.param.type, cls._type)
            s.step(2)
            self.assertEqual(s.iter, 2)
            s2 = cls(f)
            self.assertEqual(len(s2.test_nets), 0)

    def test_solve_snapshot_restore(self):
        f = self.solver_file()
        s = caffe.SGDSolver(f)
        s.step(5)
        model, state = s.snapshot()
        self.assertTrue(os.path.exists(model) and os.path.exists(state), (model, state))
        w5 = s.net.params['score'][0].data.copy()
        s.solve()
        self.assertEqual(s.iter, 20)
        t = caffe.SGDSolver(f)
        t.restore(state)
        self.assertEqual(t.iter, 5)
        np.testing.assert_array_equal(t.net.params['score'][0].data, w5)

    def test_loss_weights(self):
        s = caffe.SGDSolver(self.solver_file())
        self.assertEqual(s.net.blob_loss_weights['loss'], 1)
        self.assertEqual(s.net.blob_loss_weights['score'], 0)

    def test_callbacks(self):
        s = caffe.SGDSolver(self.solver_file())
        calls = []
        s.add_callback(lambda: calls.append(('start', s.iter)), lambda: calls.append(('grad', s.iter)))
        s.step(3)
        self.assertEqual(calls, [('start', 0), ('grad', 0), ('start', 1), ('grad', 1), ('start', 2), ('grad', 2)])

        def fail():
            raise ValueError('stop here')
        s.add_callback(fail, None)
        with self.assertRaisesRegex(ValueError, 'stop here'):
            s.step(1)

    def test_seed(self):
        got = []
        for _ in range(2):
            caffe.set_random_seed(42)
            s = caffe.SGDSolver(self.solver_file())
            got.append(s.net.params['conv'][0].data.copy())
        np.testing.assert_array_equal(got[0], got[1])


class TestIO(gctest.TempDirTest):
    def test_load_image(self):
        rgb = np.zeros((4, 5, 3), np.uint8)
        rgb[..., 0] = 255  # red
        rgb[1, 2] = (0, 51, 102)
        path = self.path('x.png')
        png(path, rgb)
        im = caffe.io.load_image(path)
        self.assertEqual(im.shape, (4, 5, 3))
        self.assertEqual(im.dtype, np.float32)
        np.testing.assert_allclose(im, rgb / 255.0, atol=1e-6)
        gray = caffe.io.load_image(path, color=False)
        self.assertEqual(gray.shape, (4, 5, 1))

    def test_transformer(self):
        t = caffe.io.Transformer({'data': (1, 3, 6, 4)})
        t.set_transpose('data', (2, 0, 1))
        t.set_channel_swap('data', (2, 1, 0))
        t.set_raw_scale('data', 255)
        t.set_mean('data', np.array([10, 20, 30]))
        im = np.random.RandomState(2).rand(6, 4, 3).astype(np.float32)
        x = t.preprocess('data', im)
        self.assertEqual(x.shape, (3, 6, 4))
        np.testing.assert_allclose(x[0], im[:, :, 2] * 255 - 10, rtol=1e-5)
        np.testing.assert_allclose(t.deprocess('data', x), im, rtol=1e-5, atol=1e-6)
        big = caffe.io.resize_image(im, (12, 8))
        self.assertEqual(big.shape, (12, 8, 3))
        self.assertEqual(t.preprocess('data', big).shape, (3, 6, 4))
        crops = caffe.io.oversample([im, im], (4, 2))
        self.assertEqual(crops.shape, (20, 4, 2, 3))
        np.testing.assert_array_equal(crops[5], crops[0][:, ::-1])

    def test_protos(self):
        a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        np.testing.assert_array_equal(caffe.io.blobproto_to_array(caffe.io.array_to_blobproto(a)), a)
        vec = caffe.io.arraylist_to_blobprotovector_str([a, a[0]])
        back = caffe.io.blobprotovector_str_to_arraylist(vec)
        np.testing.assert_array_equal(back[1], a[0])
        d = caffe.io.array_to_datum(a.astype(np.uint8), label=3)
        self.assertEqual(d.label, 3)
        np.testing.assert_array_equal(caffe.io.datum_to_array(d), a.astype(np.uint8))
        np.testing.assert_array_equal(caffe.io.datum_to_array(caffe.io.array_to_datum(a)), a)


class TestClassifier(gctest.TempDirTest):
    def test_predict(self):
        proto = self.write('deploy.prototxt', deploy_net(batch=10))
        weights = self.path('w.caffemodel')
        caffe.Net(proto, caffe.TEST).save(weights)
        c = caffe.Classifier(proto, weights, image_dims=(10, 10), raw_scale=255, channel_swap=(2, 1, 0))
        ims = [np.random.RandomState(i).rand(12, 12, 3).astype(np.float32) for i in range(3)]
        p = c.predict(ims)
        self.assertEqual(p.shape, (3, 5))
        np.testing.assert_allclose(p.sum(axis=1), 1, rtol=1e-5)
        self.assertEqual(c.predict(ims, oversample=False).shape, (3, 5))

    def test_detector(self):
        proto = self.write('deploy.prototxt', deploy_net(batch=2))
        weights = self.path('w.caffemodel')
        caffe.Net(proto, caffe.TEST).save(weights)
        img = self.path('im.png')
        png(img, (np.random.RandomState(3).rand(20, 24, 3) * 255).astype(np.uint8))
        windows = [(0, 0, 10, 10), (5, 6, 20, 24), (2, 2, 8, 12)]
        for pad in (None, 2):
            d = caffe.Detector(proto, weights, raw_scale=255, context_pad=pad)
            dets = d.detect_windows([(img, windows)])
            self.assertEqual(len(dets), 3)
            for det, w in zip(dets, windows):
                self.assertEqual(det['filename'], img)
                self.assertEqual(list(det['window']), list(w))
                self.assertEqual(det['prediction'].shape, (5,))
                np.testing.assert_allclose(det['prediction'].sum(), 1, rtol=1e-5)


if __name__ == '__main__':
    unittest.main()
