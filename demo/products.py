"""The demo shop's `products` endpoints: the catalogue, its category tree and product images."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, File, HTTPException, Path, Query, Response, UploadFile

from demo import _png
from demo._responses import CONFLICT, FORBIDDEN, NOT_FOUND, ok
from demo.auth import require_admin
from demo.dependencies import Pagination, StoreDep, paginate
from demo.models import Category, Currency, Product, ProductCreate, ProductPage, ProductSort, ProductUpdate

router = APIRouter(tags=["products"])

ProductId = Annotated[int, Path(ge=1, description="The product's id.")]
MAX_IMAGE_BYTES = 1_000_000


@router.get("/products", summary="List products")
async def list_products(
    store: StoreDep,
    page: Pagination,
    category_id: Annotated[
        int | None, Query(description="Keep products in this category or any of its sub-categories.")
    ] = None,
    currency: Annotated[Currency | None, Query(description="Keep products priced in this currency.")] = None,
    sort: Annotated[ProductSort, Query(description="Order of the results.")] = ProductSort.name,
) -> ProductPage:
    """List products a page at a time, optionally filtered by category or currency."""
    items, next_cursor = paginate(store.products(category_id=category_id, currency=currency, sort=sort), page)
    return ProductPage(items=items, next_cursor=next_cursor)


@router.post(
    "/products",
    summary="Create a product",
    status_code=201,
    dependencies=[Depends(require_admin)],
    responses=FORBIDDEN | NOT_FOUND | CONFLICT,
)
async def create_product(store: StoreDep, product: ProductCreate) -> Product:
    """Add a product to the catalogue, with no stock. The SKU must be unique. Admins only."""
    return store.create_product(product)


@router.get("/products/{product_id}", summary="Get a product", responses=NOT_FOUND)
async def get_product(store: StoreDep, product_id: ProductId) -> Product:
    """Get one product by id."""
    return store.product(product_id)


@router.patch(
    "/products/{product_id}",
    summary="Update a product",
    dependencies=[Depends(require_admin)],
    responses=FORBIDDEN | NOT_FOUND,
)
async def update_product(store: StoreDep, product_id: ProductId, changes: ProductUpdate) -> Product:
    """Change some of a product's fields. Orders already placed keep the old name and price. Admins only."""
    return store.update_product(product_id, changes)


@router.delete(
    "/products/{product_id}",
    summary="Delete a product",
    status_code=204,
    # FastAPI before 0.117 reads `-> None` under `from __future__ import annotations` as a NoneType body model
    # and refuses it on a 204; saying there is none works on every release.
    response_model=None,
    dependencies=[Depends(require_admin)],
    responses=FORBIDDEN | NOT_FOUND,
)
async def delete_product(store: StoreDep, product_id: ProductId) -> None:
    """Remove a product with its stock and image. Orders already placed keep their lines. Admins only."""
    store.delete_product(product_id)


@router.get(
    "/products/{product_id}/image",
    summary="Get a product's image",
    response_class=Response,
    responses=ok("The image as PNG.", "image/png") | NOT_FOUND,
)
async def get_product_image(
    store: StoreDep,
    product_id: ProductId,
    size: Annotated[
        int, Query(ge=8, le=256, description="Width and height in pixels of the generated placeholder.")
    ] = 32,
) -> Response:
    """Get the product's uploaded image, or a generated square placeholder when it has none."""
    png = store.image(product_id)
    if png is None:
        png = _png.thumbnail(store.product(product_id).sku, size)
    return Response(png, media_type="image/png")


@router.put(
    "/products/{product_id}/image",
    summary="Upload a product's image",
    status_code=204,
    # FastAPI before 0.117 reads `-> None` under `from __future__ import annotations` as a NoneType body model
    # and refuses it on a 204; saying there is none works on every release.
    response_model=None,
    dependencies=[Depends(require_admin)],
    responses=FORBIDDEN
    | NOT_FOUND
    | {413: {"description": "The file is larger than 1 MB."}, 415: {"description": "The file is not a PNG."}},
)
async def upload_product_image(
    store: StoreDep,
    product_id: ProductId,
    file: Annotated[UploadFile, File(description="A PNG file of at most 1 MB.")],
) -> None:
    """Replace the product's image with a PNG of at most 1 MB, sent as multipart form data. Admins only."""
    store.product(product_id)
    data = await file.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise HTTPException(413, detail=f"the image is larger than {MAX_IMAGE_BYTES} bytes; send a smaller PNG")
    if not data.startswith(_png.SIGNATURE):
        raise HTTPException(415, detail=f"{file.filename!r} is not a PNG file; only PNG images are accepted")
    store.set_image(product_id, data)


@router.get("/categories", summary="List categories")
async def list_categories(store: StoreDep) -> list[Category]:
    """List the category tree: top-level categories with their sub-categories nested in `children`."""
    return store.category_tree()
