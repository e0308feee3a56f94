"""The stores: one module per aggregate over the warehouse's tables, its migrations."""
