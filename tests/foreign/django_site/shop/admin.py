"""The admin pages an agent meets: a long sortable, filterable change list with actions, and change forms with
a raw-id lookup, a two-pane many-to-many picker, date and time pickers, a select, a checkbox and a text area."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from .models import Customer, Order, Product


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ("name", "email", "city", "vip")
    list_filter = ("vip", "city")
    search_fields = ("name", "email")
    list_per_page = 50


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ("sku", "name", "price")
    search_fields = ("sku", "name")


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = ("number", "customer", "status", "placed", "total", "gift")
    list_filter = ("status", "gift", "placed", "customer__city")
    search_fields = ("number", "customer__name", "customer__email", "note")
    date_hierarchy = "placed"
    list_per_page = 100
    list_select_related = ("customer",)
    raw_id_fields = ("customer",)
    filter_horizontal = ("products",)
    actions = ("mark_shipped", "mark_cancelled")
    fieldsets = (
        (None, {"fields": ("number", "customer", "status", "products")}),
        ("Dates", {"fields": ("placed", "ship_by")}),
        ("Payment", {"fields": ("total", "gift")}),
        ("Notes", {"classes": ("collapse",), "fields": ("note",)}),
    )

    @admin.action(description="Mark selected orders as shipped")
    def mark_shipped(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        self.message_user(request, f"{queryset.update(status=Order.Status.SHIPPED)} orders marked as shipped.")

    @admin.action(description="Cancel selected orders")
    def mark_cancelled(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        self.message_user(request, f"{queryset.update(status=Order.Status.CANCELLED)} orders cancelled.")
