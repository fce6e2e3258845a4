"""A shop's customers, products and orders: enough fields to put every kind of admin widget on the page."""

from django.db import models


class Customer(models.Model):
    name = models.CharField(max_length=100)
    email = models.EmailField()
    city = models.CharField(max_length=60)
    vip = models.BooleanField("VIP", default=False)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class Product(models.Model):
    sku = models.CharField("SKU", max_length=20, unique=True)
    name = models.CharField(max_length=100)
    price = models.DecimalField(max_digits=8, decimal_places=2)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return f"{self.name} ({self.sku})"


class Order(models.Model):
    class Status(models.TextChoices):
        NEW = "new", "New"
        PAID = "paid", "Paid"
        PACKED = "packed", "Packed"
        SHIPPED = "shipped", "Shipped"
        DELIVERED = "delivered", "Delivered"
        CANCELLED = "cancelled", "Cancelled"
        RETURNED = "returned", "Returned"

    number = models.CharField(max_length=20, unique=True)
    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="orders")
    products = models.ManyToManyField(Product, blank=True, related_name="orders")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.NEW)
    placed = models.DateTimeField()
    ship_by = models.DateTimeField("ship by", null=True, blank=True)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    gift = models.BooleanField("gift wrap", default=False)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ("-placed",)

    def __str__(self) -> str:
        return self.number
