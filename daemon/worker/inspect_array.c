/* SPDX-License-Identifier: MIT */
/* Growing, appending to, sorting and copying the arrays the inspection builds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"

/* Make room for need elements in *p (of size elem), doubling. */
int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *q;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 8;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	q = reallocarray(*p, n, elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Append n_src elements of src to the array *arr of *n (capacity *cap). */
int append_all(void **arr, size_t *n, size_t *cap, const void *src, size_t n_src, size_t elem)
{
	int r;

	if (n_src == 0)
		return 0;
	r = grow(arr, cap, *n + n_src, elem);
	if (r < 0)
		return r;
	memcpy((char *)*arr + *n * elem, src, n_src * elem);
	*n += n_src;
	return 0;
}

int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort and drop duplicates; returns the new count. */
size_t sort_unique(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	char *p = base;
	size_t out = 0;

	if (n == 0)
		return 0;
	qsort(base, n, elem, cmp);
	for (size_t i = 1; i < n; i++)
		if (cmp(p + i * elem, p + out * elem) != 0) {
			out++;
			if (out != i)
				memcpy(p + out * elem, p + i * elem, elem);
		}
	return out + 1;
}

/* *ret = n strdup'ed copies of v (nothing when n is 0); *ret_n counts what was copied. */
int strv_copy(const char *const *v, size_t n, char ***ret, size_t *ret_n)
{
	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*ret)[i] = strdup(v[i]);
		if (!(*ret)[i])
			return -ENOMEM;
		*ret_n = i + 1;
	}
	return 0;
}
