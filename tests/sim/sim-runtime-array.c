/* Simulated runtime: CUDA arrays and 3D memory. A cudaArray_t is the
 * driver's CUarray; the runtime describes its element with a channel
 * format descriptor, which becomes the driver's format and channel count. */
#include "sim-runtime.h"

#include <stdint.h>

/* The driver format of channels of this kind and width, 0 for none. */
static CUarray_format
format_of(enum cudaChannelFormatKind kind, int bits)
{
	switch (kind) {
	case cudaChannelFormatKindSigned:
		return bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16 :
		       bits == 32 ? CU_AD_FORMAT_SIGNED_INT32 : 0;
	case cudaChannelFormatKindUnsigned:
		return bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 :
		       bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16 :
		       bits == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : 0;
	case cudaChannelFormatKindFloat:
		return bits == 16 ? CU_AD_FORMAT_HALF : bits == 32 ? CU_AD_FORMAT_FLOAT : 0;
	default:
		return 0;
	}
}

/* x, y, z, w: the bits of each channel; the used ones come first and are
 * all as wide. */
static cudaError_t
describe(CUDA_ARRAY3D_DESCRIPTOR *d, const struct cudaChannelFormatDesc *desc,
	 struct cudaExtent extent, unsigned int flags)
{
	const int bits[4] = { desc->x, desc->y, desc->z, desc->w };
	unsigned channels = 0;

	while (channels < 4 && bits[channels] != 0)
		channels++;
	for (unsigned i = channels; i < 4; i++)
		if (bits[i] != 0)
			return cudaErrorInvalidChannelDescriptor;
	for (unsigned i = 1; i < channels; i++)
		if (bits[i] != bits[0])
			return cudaErrorInvalidChannelDescriptor;
	*d = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = extent.width, .Height = extent.height,
					.Depth = extent.depth, .NumChannels = channels,
					.Format = format_of(desc->f, bits[0]), .Flags = flags };
	if (channels == 0 || channels == 3 || d->Format == 0)
		return cudaErrorInvalidChannelDescriptor;
	return cudaSuccess;
}

static cudaError_t
array_create(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
	     struct cudaExtent extent, unsigned int flags)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	cudaError_t err;

	SIM_RT_ENTER();
	if (!array || !desc)
		return sim_rt_fail(cudaErrorInvalidValue);
	err = describe(&d, desc, extent, flags);
	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.array_3d_create((CUarray *)array, &d));
}

/* Width and height in elements; height 0 makes a 1D array. */
cudaError_t CUDARTAPI
cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
		size_t height, unsigned int flags)
{
	return array_create(array, desc, (struct cudaExtent){ width, height, 0 }, flags);
}

cudaError_t CUDARTAPI
cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
		  struct cudaExtent extent, unsigned int flags)
{
	return array_create(array, desc, extent, flags);
}

/* Like cudaFree, a NULL array is no error. */
cudaError_t CUDARTAPI
cudaFreeArray(cudaArray_t array)
{
	SIM_RT_ENTER();
	if (!array)
		return cudaSuccess;
	return sim_rt_check(sim_rt_drv.array_destroy((CUarray)array));
}

/* Linear 3D memory: height x depth rows of width bytes, each padded to
 * the pitch the driver chooses (the width rounded up to 512 bytes), so
 * pitch x height x depth bytes in one cuMemAllocPitch. */
cudaError_t CUDARTAPI
cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
	CUdeviceptr dptr = 0;
	size_t pitch = 0;
	CUresult rc;

	SIM_RT_ENTER();
	if (!pitchedDevPtr || extent.width == 0 || extent.height == 0 || extent.depth == 0)
		return sim_rt_fail(cudaErrorInvalidValue);
	if (extent.height > SIZE_MAX / extent.depth)
		return sim_rt_fail(cudaErrorMemoryAllocation);
	rc = sim_rt_drv.mem_alloc_pitch(&dptr, &pitch, extent.width, extent.height * extent.depth,
					4);
	if (rc == CUDA_SUCCESS)
		*pitchedDevPtr = (struct cudaPitchedPtr){ .ptr = (void *)(uintptr_t)dptr,
							  .pitch = pitch,
							  .xsize = extent.width,
							  .ysize = extent.height };
	return sim_rt_check(rc);
}
