from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "django_site.shop"
    verbose_name = "Shop"
