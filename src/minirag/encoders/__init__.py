"""encoders"""
