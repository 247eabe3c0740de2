"""OpInfo ops that do not run wholly on the card, by dtype, with why (the
compiler's own reason, strict mode's message), reviewed with every change.
Written by `python test/python/opinfo_check.py --write-table f32.jsonl
f16.jsonl` from full runs (`--dtype f32 --out f32.jsonl`, `--dtype f16 --out
f16.jsonl`); test_opinfo.py fails when an unlisted op falls back."""

#: Ops the harness cannot compile for any backend: not an on-card question.
NOT_APPLICABLE = {
    "sparse.sampled_addmm": "sparse tensors: torch.compile traces strided tensors",
    "sparse.mm.reduce": "sparse tensors: torch.compile traces strided tensors",
    "to_sparse": "sparse tensors: torch.compile traces strided tensors",
}

FALLBACK = {'f16': {'allclose': 'a Dynamo graph break',
         'argsort': 'no lowering to a Spyre kernel: aten.sort.stable',
         'argwhere': 'a Dynamo graph break',
         'byte': 'element type torch.uint8',
         'cdouble': 'no lowering to a Spyre kernel: prims.convert_element_type.default',
         'cfloat': 'no lowering to a Spyre kernel: prims.convert_element_type.default',
         'chalf': 'no lowering to a Spyre kernel: prims.convert_element_type.default',
         'combinations': 'a Dynamo graph break',
         'complex': 'no lowering to a Spyre kernel: aten.complex.default',
         'corrcoef': 'a Dynamo graph break',
         'cov': 'a Dynamo graph break',
         'double': 'element type torch.float64',
         'equal': 'a Dynamo graph break',
         'float_power': 'element type torch.float64',
         'frexp': "op 'frexp' with several results",
         'grid_sampler_2d': 'SpyreFallbackError: aten.add.Tensor, aten.bitwise_and.Tensor, '
                            'aten.div.Tensor_mode, aten.eq.Tensor, aten.expand.default, '
                            'aten.floor.default, aten.full.default, aten.ge.Scalar, '
                            'aten.logical_and.default, aten.lt.Scalar, aten.mul.Tensor, '
                            'aten.remainder.Scalar, aten.reshape.default, aten.select.int, ate',
         'grid_sampler_3d': 'no lowering to a Spyre kernel: aten.grid_sampler_3d.default',
         'hash_tensor': 'no lowering to a Spyre kernel: aten.hash_tensor.default',
         'histc': 'no lowering to a Spyre kernel: aten.histc.default',
         'igamma': "op 'igamma'",
         'igammac': "op 'igammac'",
         'item': 'a Dynamo graph break',
         'log_softmax.with_dtype': 'element type torch.float64',
         'long': "int64 to_dtype may leave the card's int32 (values in [-oo, oo])",
         'masked_select': 'a Dynamo graph break',
         'matrix_exp': 'no lowering to a Spyre kernel: aten.linalg_matrix_exp.default',
         'mode': 'no lowering to a Spyre kernel: aten.mode.default',
         'msort': 'no lowering to a Spyre kernel: aten.sort.stable',
         'multinomial': 'no lowering to a Spyre kernel: aten.multinomial.default',
         'nextafter': 'nextafter steps through the bits of a float, which no vector instruction '
                      'reachable from a generic body does (fp16 has one fraction bit more than the '
                      "card's DLFloat16, too)",
         'nn.functional.embedding_bag': 'no lowering to a Spyre kernel: '
                                        'aten._embedding_bag_forward_only.default',
         'nn.functional.fractional_max_pool2d': "int64 to_dtype may leave the card's int32 (values "
                                                'in [-oo, oo])',
         'nn.functional.fractional_max_pool3d': "int64 to_dtype may leave the card's int32 (values "
                                                'in [-oo, oo])',
         'nn.functional.gaussian_nll_loss': 'a Dynamo graph break',
         'nn.functional.grid_sample': 'SpyreFallbackError: aten.add.Tensor, '
                                      'aten.bitwise_and.Tensor, aten.div.Tensor_mode, '
                                      'aten.eq.Tensor, aten.expand.default, aten.floor.default, '
                                      'aten.full.default, aten.ge.Scalar, '
                                      'aten.logical_and.default, aten.lt.Scalar, aten.mul.Tensor, '
                                      'aten.remainder.Scalar, aten.reshape.default, '
                                      'aten.select.int, ate',
         'nn.functional.softmin.with_dtype': 'element type torch.float64',
         'nonzero': 'a Dynamo graph break',
         'nonzero_static': 'no lowering to a Spyre kernel: aten.nonzero_static.default',
         'resize_': 'a Dynamo graph break',
         'resize_as_': 'a Dynamo graph break',
         'short': 'element type torch.int16',
         'softmax.with_dtype': 'element type torch.float64',
         'sort': 'no lowering to a Spyre kernel: aten.sort.stable',
         'tensor_split': 'a Dynamo graph break',
         'to': 'element type torch.float64',
         'unique': 'a Dynamo graph break',
         'unique_consecutive': 'a Dynamo graph break',
         'view_as_complex': 'no lowering to a Spyre kernel: aten.view_as_complex.default'},
 'f32': {'_upsample_bilinear2d_aa': 'no lowering to a Spyre kernel: '
                                    'aten._upsample_bilinear2d_aa.default',
         'allclose': 'a Dynamo graph break',
         'argsort': 'no lowering to a Spyre kernel: aten.sort.stable',
         'argwhere': 'a Dynamo graph break',
         'byte': 'element type torch.uint8',
         'cdouble': 'no lowering to a Spyre kernel: prims.convert_element_type.default',
         'cfloat': 'no lowering to a Spyre kernel: prims.convert_element_type.default',
         'chalf': 'no lowering to a Spyre kernel: prims.convert_element_type.default',
         'combinations': 'a Dynamo graph break',
         'complex': 'no lowering to a Spyre kernel: aten.complex.default',
         'corrcoef': 'a Dynamo graph break',
         'cov': 'a Dynamo graph break',
         'double': 'element type torch.float64',
         'equal': 'a Dynamo graph break',
         'fft.fft': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.fft2': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.fftn': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.hfft': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.hfft2': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.hfftn': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.ifft': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.ifft2': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.ifftn': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.ihfft': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.ihfft2': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.ihfftn': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.irfft': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.irfft2': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.irfftn': 'no lowering to a Spyre kernel: aten.copy_',
         'fft.rfft': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.rfft2': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'fft.rfftn': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'float_power': 'element type torch.float64',
         'frexp': "op 'frexp' with several results",
         'grid_sampler_2d': 'SpyreFallbackError: aten.add.Tensor, aten.bitwise_and.Tensor, '
                            'aten.div.Tensor_mode, aten.eq.Tensor, aten.expand.default, '
                            'aten.floor.default, aten.full.default, aten.ge.Scalar, '
                            'aten.logical_and.default, aten.lt.Scalar, aten.mul.Tensor, '
                            'aten.remainder.Scalar, aten.reshape.default, aten.select.int, ate',
         'grid_sampler_3d': 'no lowering to a Spyre kernel: aten.grid_sampler_3d.default',
         'hash_tensor': 'no lowering to a Spyre kernel: aten.hash_tensor.default',
         'histogramdd': 'no lowering to a Spyre kernel: aten._histogramdd_bin_edges.default',
         'igamma': "op 'igamma'",
         'igammac': "op 'igammac'",
         'item': 'a Dynamo graph break',
         'linalg.cond': 'no lowering to a Spyre kernel: aten._linalg_svd.default',
         'linalg.eig': 'no lowering to a Spyre kernel: aten.linalg_eig.default',
         'linalg.eigh': 'no lowering to a Spyre kernel: aten._linalg_eigh.default',
         'linalg.eigvals': 'no lowering to a Spyre kernel: aten.linalg_eig.default',
         'linalg.eigvalsh': 'no lowering to a Spyre kernel: aten._linalg_eigh.default',
         'linalg.ldl_factor': 'no lowering to a Spyre kernel: aten.linalg_ldl_factor_ex.default',
         'linalg.ldl_factor_ex': 'no lowering to a Spyre kernel: aten.linalg_ldl_factor_ex.default',
         'linalg.ldl_solve': 'no lowering to a Spyre kernel: aten.linalg_ldl_solve.default',
         'linalg.lstsq': 'a Dynamo graph break',
         'linalg.lstsq.grad_oriented': 'a Dynamo graph break',
         'linalg.matrix_rank': 'no lowering to a Spyre kernel: aten._linalg_svd.default',
         'linalg.matrix_rank.hermitian': 'no lowering to a Spyre kernel: aten._linalg_eigh.default',
         'linalg.pinv': 'no lowering to a Spyre kernel: aten.linalg_pinv.atol_rtol_tensor',
         'linalg.pinv.hermitian': 'no lowering to a Spyre kernel: '
                                  'aten.linalg_pinv.atol_rtol_tensor',
         'linalg.pinv.singular': 'no lowering to a Spyre kernel: aten.linalg_pinv.atol_rtol_tensor',
         'linalg.svd': 'no lowering to a Spyre kernel: aten._linalg_svd.default',
         'linalg.svdvals': 'no lowering to a Spyre kernel: aten._linalg_svd.default',
         'log_softmax.with_dtype': 'element type torch.float64',
         'long': "int64 to_dtype may leave the card's int32 (values in [-oo, oo])",
         'masked_select': 'a Dynamo graph break',
         'matrix_exp': 'no lowering to a Spyre kernel: aten.linalg_matrix_exp.default',
         'mode': 'no lowering to a Spyre kernel: aten.mode.default',
         'msort': 'no lowering to a Spyre kernel: aten.sort.stable',
         'multinomial': 'no lowering to a Spyre kernel: aten.multinomial.default',
         'nextafter': 'nextafter steps through the bits of a float, which no vector instruction '
                      'reachable from a generic body does (fp16 has one fraction bit more than the '
                      "card's DLFloat16, too)",
         'nn.functional.ctc_loss': 'a Dynamo graph break',
         'nn.functional.embedding_bag': 'no lowering to a Spyre kernel: '
                                        'aten._embedding_bag_forward_only.default',
         'nn.functional.fractional_max_pool2d': "int64 to_dtype may leave the card's int32 (values "
                                                'in [-oo, oo])',
         'nn.functional.fractional_max_pool3d': "int64 to_dtype may leave the card's int32 (values "
                                                'in [-oo, oo])',
         'nn.functional.gaussian_nll_loss': 'a Dynamo graph break',
         'nn.functional.grid_sample': 'SpyreFallbackError: aten.add.Tensor, '
                                      'aten.bitwise_and.Tensor, aten.div.Tensor_mode, '
                                      'aten.eq.Tensor, aten.expand.default, aten.floor.default, '
                                      'aten.full.default, aten.ge.Scalar, '
                                      'aten.logical_and.default, aten.lt.Scalar, aten.mul.Tensor, '
                                      'aten.remainder.Scalar, aten.reshape.default, '
                                      'aten.select.int, ate',
         'nn.functional.softmin.with_dtype': 'element type torch.float64',
         'nonzero': 'a Dynamo graph break',
         'nonzero_static': 'no lowering to a Spyre kernel: aten.nonzero_static.default',
         'norm.nuc': 'no lowering to a Spyre kernel: aten._linalg_svd.default',
         'pca_lowrank': 'no lowering to a Spyre kernel: aten.linalg_qr.default',
         'pinverse': 'no lowering to a Spyre kernel: aten.linalg_pinv.atol_rtol_tensor',
         'polar': 'no lowering to a Spyre kernel: aten.polar.default',
         'resize_': 'a Dynamo graph break',
         'resize_as_': 'a Dynamo graph break',
         'short': 'element type torch.int16',
         'softmax.with_dtype': 'element type torch.float64',
         'sort': 'no lowering to a Spyre kernel: aten.sort.stable',
         'special.airy_ai': "op 'airy_ai'",
         'special.laguerre_polynomial_l': 'laguerre_polynomial_l of an order that is not a constant in [0, 128]: '
                                    'PyTorch runs its recurrence n times',
         'special.legendre_polynomial_p': 'legendre_polynomial_p of an order that is not a constant in [0, 128]: '
                                    'PyTorch runs its recurrence n times',
         'stft': 'no lowering to a Spyre kernel: aten._fft_r2c.default',
         'svd': 'no lowering to a Spyre kernel: aten._linalg_svd.default',
         'svd_lowrank': 'no lowering to a Spyre kernel: aten.linalg_qr.default',
         'tensor_split': 'a Dynamo graph break',
         'to': 'element type torch.float64',
         'unique': 'a Dynamo graph break',
         'unique_consecutive': 'a Dynamo graph break',
         'view_as_complex': 'no lowering to a Spyre kernel: aten.view_as_complex.default'}}
